package assistant

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

func linkRepoTool() Tool {
	return repoKind.createTool("hub_link_repo",
		"Add a repository to the person's records: a name, and its remote URL, its checkout folder on this computer, or both, and optionally its default branch.",
		`{"type":"object","additionalProperties":false,"required":["name"],"properties":{
			"name":{"type":"string","minLength":1,"maxLength":200},
			"url":{"type":"string","maxLength":2000,"description":"the remote, e.g. https://github.com/owner/name"},
			"path":{"type":"string","maxLength":4096,"description":"the checkout folder on this computer"},
			"defaultBranch":{"type":"string","maxLength":255}}}`)
}
