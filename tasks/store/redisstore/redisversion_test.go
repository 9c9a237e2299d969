package redisstore

import "testing"

func TestRedisVersionOK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		info string
		ok   bool
	}{
		{"# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:0\r\n", true},
		{"redis_version:6.2.0\r\n", true},
		{"redis_version:10.0.1\r\n", true},
		{"redis_version:6.0.16\r\n", false},
		{"redis_version:5.0.7\r\n", false},
		{"redis_version:unknown\r\n", true}, // unreadable: the commands will tell
		{"# Server\r\n", true},
	}
	for _, tc := range tests {
		if v, ok := redisVersionOK(tc.info); ok != tc.ok {
			t.Errorf("redisVersionOK(%q) = %q, %v; want ok %v", tc.info, v, ok, tc.ok)
		}
	}
}
