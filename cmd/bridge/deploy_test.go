package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/a2a-agui-bridge/bridge/config"
)

// The bridge configs shipped under deploy/ (the systemd example and the
// one in the Kubernetes ConfigMap) parse and validate, with the Redis store
// and its lease: a user copying them starts from a config that loads.
func TestDeployConfigsLoad(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..") // a test runs in its package's directory, cmd/bridge
	env := func(name string) (string, bool) { return "secret", name == "REDIS_PASSWORD" }
	configs := map[string][]byte{}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "systemd", "bridge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	configs["systemd"] = b
	k8s, err := os.ReadFile(filepath.Join(root, "deploy", "kubernetes", "bridge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(k8s)))
	var images []string
	for {
		var doc struct {
			Kind string            `yaml:"kind"`
			Data map[string]string `yaml:"data"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct{ Image string } `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		switch doc.Kind {
		case "ConfigMap":
			configs["kubernetes"] = []byte(doc.Data["bridge.yaml"])
		case "Deployment":
			for _, c := range doc.Spec.Template.Spec.Containers {
				images = append(images, c.Image)
			}
		}
	}
	// The Deployment runs what `make image` builds.
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	tag := ""
	for line := range strings.Lines(string(makefile)) {
		if v, ok := strings.CutPrefix(line, "IMAGE_TAG"); ok {
			tag = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "?="))
		}
	}
	if tag == "" || len(images) != 1 || images[0] != tag {
		t.Errorf("the Deployment runs %q, make image builds %q", images, tag)
	}
	if len(configs) != 2 {
		t.Fatalf("found %d configs, want the systemd one and the ConfigMap's", len(configs))
	}
	for name, data := range configs {
		c, err := config.Parse(data, env)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.Store.Kind != config.StoreRedis || c.Store.Lease.Std() <= 0 || !strings.Contains(c.Store.URL, ":secret@") {
			t.Errorf("%s: store %+v", name, c.Store)
		}
	}
}
