package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat. The kernel fixes
// USER_HZ at 100 on every architecture Go supports, whatever its internal
// tick rate, because it is part of the user ABI (getconf CLK_TCK prints it).
const userHZ = 100

// cpu is the CPU time a process has used so far, all threads included
// (those that have exited too).
type cpu struct {
	user, sys time.Duration
}

func (c cpu) total() time.Duration { return c.user + c.sys }

func (c cpu) sub(before cpu) cpu { return cpu{c.user - before.user, c.sys - before.sys} }

// cpuTime reads process pid's CPU time from /proc/<pid>/stat.
func cpuTime(pid int) (cpu, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpu{}, err
	}
	utime, stime, err := parseStatCPU(b)
	if err != nil {
		return cpu{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return cpu{ticks(utime), ticks(stime)}, nil
}

func ticks(n uint64) time.Duration {
	return time.Duration(n) * (time.Second / userHZ)
}

// parseStatCPU extracts utime and stime (fields 14 and 15, in clock ticks)
// from the contents of /proc/<pid>/stat. The second field, the command name,
// is in parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parseStatCPU(b []byte) (utime, stime uint64, err error) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, 0, errors.New("no command name")
	}
	// After ")": field 3 (state) is fields[0], so field n is fields[n-3].
	fields := bytes.Fields(b[end+1:])
	if len(fields) < 13 {
		return 0, 0, fmt.Errorf("%d fields after the command name, want at least 13", len(fields))
	}
	if utime, err = strconv.ParseUint(string(fields[14-3]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("utime: %w", err)
	}
	if stime, err = strconv.ParseUint(string(fields[15-3]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("stime: %w", err)
	}
	return utime, stime, nil
}

// procStatus is what the bench reads from /proc/<pid>/status.
type procStatus struct {
	PeakRSSKiB int64 // VmHWM: the largest resident set so far
	RSSKiB     int64 // VmRSS: the resident set now
	Threads    int64 // OS threads (a Go process has few; goroutines are not visible here)
}

func readStatus(pid int) (procStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStatus{}, err
	}
	st, err := parseStatus(b)
	if err != nil {
		return procStatus{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return st, nil
}

// parseStatus reads VmHWM, VmRSS and Threads from the contents of
// /proc/<pid>/status ("Key:\tvalue [kB]" lines). All three must be present:
// a process that has exited (a zombie) has no Vm* lines.
func parseStatus(b []byte) (procStatus, error) {
	var st procStatus
	err := parseProcFields(b, map[string]*int64{"VmHWM": &st.PeakRSSKiB, "VmRSS": &st.RSSKiB, "Threads": &st.Threads})
	if err != nil {
		return procStatus{}, fmt.Errorf("%w (has the process exited?)", err)
	}
	return st, nil
}

// parseProcFields fills want from the "key: value [unit]" lines of a /proc
// file (status, io); every key of want must be there.
func parseProcFields(b []byte, want map[string]*int64) error {
	found := 0
	for line := range bytes.Lines(b) {
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		dst := want[string(key)]
		if dst == nil {
			continue
		}
		fields := bytes.Fields(value)
		if len(fields) == 0 {
			return fmt.Errorf("%s: no value", key)
		}
		n, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		*dst = n
		found++
	}
	if found != len(want) {
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return fmt.Errorf("one of %s missing", strings.Join(keys, ", "))
	}
	return nil
}

// openFiles counts process pid's open file descriptors.
func openFiles(pid int) (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(entries), err
}

// openFilesLimit returns process pid's soft RLIMIT_NOFILE, from
// /proc/<pid>/limits.
func openFilesLimit(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return 0, err
	}
	return parseNoFile(b)
}

// parseNoFile reads the soft limit of the "Max open files" row of
// /proc/<pid>/limits; -1 stands for unlimited.
func parseNoFile(b []byte) (int64, error) {
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("Max open files"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 {
			break
		}
		if string(fields[0]) == "unlimited" {
			return -1, nil
		}
		return strconv.ParseInt(string(fields[0]), 10, 64)
	}
	return 0, errors.New(`no "Max open files" row`)
}

// ioCounts are a process's I/O system calls so far, from /proc/<pid>/io:
// syscr counts read-like calls (read, readv, recvfrom, recvmsg, …) and
// syscw write-like ones (write, writev, sendto, sendmsg, …), on every file
// and socket.
type ioCounts struct {
	syscr, syscw int64
}

func (c ioCounts) sub(before ioCounts) ioCounts {
	return ioCounts{c.syscr - before.syscr, c.syscw - before.syscw}
}

// readIO reads process pid's syscall counts. /proc/<pid>/io is readable for
// a process of the same user that we may ptrace, such as our own children.
func readIO(pid int) (ioCounts, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return ioCounts{}, err
	}
	c, err := parseIO(b)
	if err != nil {
		return ioCounts{}, fmt.Errorf("/proc/%d/io: %w", pid, err)
	}
	return c, nil
}

// parseIO reads syscr and syscw from the contents of /proc/<pid>/io; both
// must be present.
func parseIO(b []byte) (ioCounts, error) {
	var c ioCounts
	if err := parseProcFields(b, map[string]*int64{"syscr": &c.syscr, "syscw": &c.syscw}); err != nil {
		return ioCounts{}, err
	}
	return c, nil
}
