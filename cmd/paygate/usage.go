package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlagSet is a command's flag set: its mistakes go to stderr, and -h
// (--help) prints the command's lines of the overall usage and one line
// per flag (docs/cli.md).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(fs) }
	return fs
}

// printUsage writes a flag set's usage: the command's synopsis, then its
// flags, one line each.
func printUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintln(w, "Usage:")
	for _, l := range synopsis(fs.Name()) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w, "\nFlags:")
	n := 0
	fs.VisitAll(func(f *flag.Flag) { fmt.Fprintln(w, flagLine(f)); n++ })
	if n == 0 {
		fmt.Fprintln(w, "  (none)")
	}
}

// flagLine is one flag in one line: its name and value, what it does, and
// its default when it has one.
func flagLine(f *flag.Flag) string {
	value, what := flag.UnquoteUsage(f)
	name := "--" + f.Name
	if len(f.Name) == 1 {
		name = "-" + f.Name
	}
	if value != "" {
		name += " " + strings.ToUpper(value)
	}
	line := fmt.Sprintf("  %-26s %s", name, strings.Join(strings.Fields(what), " "))
	if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" {
		line += " (default " + d + ")"
	}
	return line
}

// synopsis is a command's lines of the overall usage: "keys create" gives
// the line of `paygate keys create`, "keys" every keys line, each with the
// description lines under it.
func synopsis(name string) []string {
	group, sub, _ := strings.Cut(name, " ")
	var out []string
	taking := false
	for _, l := range strings.Split(usage, "\n") {
		rest, isCommand := strings.CutPrefix(l, "  paygate ")
		switch {
		case isCommand:
			g, args, _ := strings.Cut(rest, " ")
			args = strings.TrimSpace(args)
			taking = g == group && (sub == "" || args == sub || strings.HasPrefix(args, sub+" "))
			if taking {
				out = append(out, l)
			}
		case taking && strings.HasPrefix(l, "      "):
			out = append(out, l) // a description under the command
		default:
			taking = false
		}
	}
	if len(out) == 0 {
		out = append(out, "  paygate "+name+" [flags]")
	}
	return out
}

// helpAsked reports whether args ask for help before any "--".
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// isHelp reports whether a command ended because it was asked for help:
// it printed its usage, and the program exits 0.
func isHelp(err error) bool {
	var u usageError
	return errors.Is(err, flag.ErrHelp) || (errors.As(err, &u) && u.msg == flag.ErrHelp.Error())
}
