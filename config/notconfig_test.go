package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 33 item 6: a config swapped for a link to /etc/shadow was logged
// (serve --watch) and printed (bridge check) line by line as unknown
// keys, and a 200 MB file was read whole. A file that is not a config is
// reported without any of its text, and a file above MaxConfigBytes is
// not read.
func TestLoadDoesNotEchoAFileThatIsNotAConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shadow := filepath.Join(dir, "shadow")
	if err := os.WriteFile(shadow, []byte("root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\nalice:$y$j9T$secrethash:19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "bridge.yaml")
	if err := os.Symlink(shadow, link); err != nil {
		t.Fatal(err)
	}
	_, err := Load(link)
	if err == nil {
		t.Fatal("a shadow file loaded as a config")
	}
	for _, leak := range []string{"root", "daemon", "alice", "secrethash", "19000"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("the error repeats the file's text (%q): %v", leak, err)
		}
	}
	if !strings.Contains(err.Error(), "not a bridge config") {
		t.Errorf("the error does not say what is wrong: %v", err)
	}

	// A config with an unknown key still names it, briefly.
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("listen: 127.0.0.1:8080\nlisten_addr: x\n"+strings.Repeat("k", 500)+": 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(typo)
	if err == nil || !strings.Contains(err.Error(), "listen_addr: unknown key") || strings.Contains(err.Error(), strings.Repeat("k", 100)) {
		t.Errorf("unknown keys: %v", err)
	}

	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("listen: 127.0.0.1:8080\n#"+strings.Repeat("x", MaxConfigBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a %d-byte config: %v", MaxConfigBytes+26, err)
	}
}
