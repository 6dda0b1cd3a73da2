package assistant

// The write policies (spec 000 §6): what a write the model calls does.
const (
	// Immediate runs a write at once, undoable.
	Immediate = "immediate"
	// Preview holds a write for Apply in the chat.
	Preview = "preview"
	// NeedsMe holds a write for an answer on Needs me (or Apply in the chat, whichever comes first).
	NeedsMe = "needs-me"
)

// WritePolicies are the policies a person can choose.
var WritePolicies = []string{Immediate, Preview, NeedsMe}
