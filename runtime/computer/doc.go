// Package computer is a node's own tools on its owner's computer (spec 002 §8.13): one command
// line, files, git reads, the computer's own web servers. Every call passes the decision order
// (decide.go) first: the hard floor, the node's own folders, the owner's kept answers, unattended
// work inside the OS sandbox, else a card for the owner. Commands run in the same OS sandbox the
// agents use (engines/sandbox); where the platform has none, the node's commands ask each mission.
//
// The package runs things and keeps their output; the node package owns turns, cards and what a
// node is told. Nothing here logs or records a command's output, only what ran and where.
package computer
