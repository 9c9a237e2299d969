// Package config holds the bridge's YAML configuration: the [Config] struct,
// [Load] and [Parse] to read it, and [Config.Validate] to check it.
//
// Config is plain data. Every field documents its unit and default, and
// [Default] / [Config.ApplyDefaults] fill the defaults in. Other packages do not
// import config: package server (the wiring) copies the values they need into
// their own option structs (see STYLE.md, convention 10).
//
// Parsing is strict, because a typo in a config file should stop the bridge at
// start rather than be ignored: unknown keys, values of the wrong type, bad
// durations and every failed validation rule are reported together, each with
// the path of the offending key (for example agents[0].timeouts.run) and, when
// the value came from a file, its line. Such errors are a [*ValidationError].
//
// ${NAME} and ${NAME:-default} in scalar values are replaced from the
// environment before the values are decoded, so secrets need not be written
// into the file; $$ stands for a literal $. The reference for every key is
// REFERENCE.md in this directory.
package config
