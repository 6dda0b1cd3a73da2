package node

type RoomKind string

const (
	RoomDM   RoomKind = "dm"
	RoomCrew RoomKind = "crew"
	RoomTask RoomKind = "task"
)

type Member struct {
	NodeID, Handle, Role string
	Paused               bool
}
type RouteRoom struct {
	Kind    RoomKind
	DMNode  string
	LeadID  string
	Members []Member
}
type RouteMessage struct {
	FromPerson bool
	FromNode   string
	Kind       string
	Body       string
	Private    bool
}
type RouteState struct {
	NodeRun int
	Depth   int
	Braked  bool
}
type Route struct {
	Wake, Resume []string
	Brake        string
}

const MaxNodeRun = 8

func WhoSpeaks(room RouteRoom, m RouteMessage, st RouteState) Route {
	if m.FromPerson && room.Kind == RoomDM {
		return Route{Wake: []string{room.DMNode}}
	}
	return Route{}
}

type Avatar struct {
	Shape string `json:"shape"`
	Color string `json:"color"`
	Eyes  string `json:"eyes"`
}
type Template struct {
	ID, Name, Slug, Role, Summary string
	Avatar                        Avatar
	Charter                       string
}

var Shapes = []string{"orb"}

func TemplateByID(id string) (Template, bool)                 { return Template{}, false }
func CharterOf(templateID, charter string, edited bool) string { return charter }
func AvatarFor(n int) Avatar                                   { return Avatar{Shape: "orb"} }
func Slugify(s string) string                                  { return s }
func ValidHandle(s string) bool                                { return true }
func ReservedHandle(s string) bool                             { return s == "everyone" || s == "nodes" }
