package tools

import "github.com/ensemblework/ensemble/runtime/records"

// The repository tools: list and link (add), named as spec 004 §5.1 and the bridge's actions name
// them, over the fields records keeps of a repository.

type repoRow struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	URL           string `json:"url,omitempty"`
	Path          string `json:"path,omitempty"`
	DefaultBranch string `json:"defaultBranch,omitempty"`
}

var repoKind = recordKind[records.Repo, records.RepoInput]{
	kind: "repo", noun: "repository", listName: "hub_list_repos",
	area:    "repos",
	coll:    (*records.Service).Repos,
	id:      func(r records.Repo) string { return r.ID },
	title:   func(r records.Repo) string { return r.Name },
	deleted: func(r records.Repo) bool { return r.DeletedAt != nil },
	row: func(r records.Repo) any {
		return repoRow{ID: r.ID, Name: r.Name, URL: r.URL, Path: r.Path, DefaultBranch: r.DefaultBranch}
	},
	name: func(in records.RepoInput) (string, bool) { return in.Name.V, in.Name.Set },
	changes: func(in records.RepoInput) (plans, done []string) {
		return fieldChanges(fieldChange{"name", in.Name, false}, fieldChange{"URL", in.URL, false},
			fieldChange{"path", in.Path, false}, fieldChange{"default branch", in.DefaultBranch, false})
	},
}

func listReposTool() Tool {
	return listTool(repoKind, "List the person's repositories (not in Trash): remote URL, checkout folder on this computer and default branch. Filter by words in the name. Long lists come in parts: call again with the offset the note names.",
		func(records.Repo, listByNameIn) bool { return true })
}

// linkRepoShape is hub_link_repo's input as its schema says it; it decodes into records.RepoInput.
type linkRepoShape struct {
	Name          string `json:"name" check:"minLength=1,maxLength=200"`
	URL           string `json:"url,omitempty" check:"maxLength=2000" jsonschema:"the remote, e.g. https://github.com/owner/name"`
	Path          string `json:"path,omitempty" check:"maxLength=4096" jsonschema:"the checkout folder on this computer"`
	DefaultBranch string `json:"defaultBranch,omitempty" check:"maxLength=255"`
}

func linkRepoTool() Tool {
	return createTool[linkRepoShape](repoKind, "hub_link_repo",
		"Add a repository to the person's records: a name, and its remote URL, its checkout folder on this computer, or both, and optionally its default branch.")
}
