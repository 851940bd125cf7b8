package ask

// Surface is where a person gave a reply (contract revision 4). Every surface closes an ask
// through the same rule (ApplyReply): the first valid answer wins wherever it is given, and the
// thread says where it came from, so that every other copy can say "Answered by Ada in Slack".
type Surface string

const (
	SurfaceInbox Surface = "inbox"
	SurfacePush  Surface = "push"
	SurfaceSlack Surface = "slack"
	SurfaceEmail Surface = "email"
)

// Valid reports whether s is one of the contract's surfaces.
func (s Surface) Valid() bool {
	switch s {
	case SurfaceInbox, SurfacePush, SurfaceSlack, SurfaceEmail:
		return true
	}
	return false
}

// Label is how a surface is named in words: "the inbox", "Slack".
func (s Surface) Label() string {
	switch s {
	case SurfaceInbox:
		return "the inbox"
	case SurfacePush:
		return "a notification"
	case SurfaceSlack:
		return "Slack"
	case SurfaceEmail:
		return "email"
	}
	return string(s)
}
