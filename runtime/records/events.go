package records

import (
	"slices"

	"github.com/ensemblework/ensemble/runtime/events"
)

// changes are the kinds of event that announce one type of record's changes.
type changes struct{ created, updated, trashed, restored, purged events.Kind }

// Purged is the data of a record's purged event: the record is gone for good.
type Purged struct {
	ID string `json:"id"`
}

// The kinds of event that announce a file's changes; each carries the [File] as it now is, but
// KindFilePurged, which carries [Purged].
const (
	KindFileCreated  events.Kind = "file.created"
	KindFileUpdated  events.Kind = "file.updated"
	KindFileTrashed  events.Kind = "file.trashed"
	KindFileRestored events.Kind = "file.restored"
	KindFilePurged   events.Kind = "file.purged"
)

var fileChanges = changes{KindFileCreated, KindFileUpdated, KindFileTrashed, KindFileRestored, KindFilePurged}

// The kinds of event that announce a page's changes; each carries the [Page] as it now is, but
// KindPagePurged, which carries [Purged].
const (
	KindPageCreated  events.Kind = "page.created"
	KindPageUpdated  events.Kind = "page.updated"
	KindPageTrashed  events.Kind = "page.trashed"
	KindPageRestored events.Kind = "page.restored"
	KindPagePurged   events.Kind = "page.purged"
)

var pageChanges = changes{KindPageCreated, KindPageUpdated, KindPageTrashed, KindPageRestored, KindPagePurged}

// The kinds of event that announce a person's changes; each carries the [Person] as it now is, but
// KindPersonPurged, which carries [Purged].
const (
	KindPersonCreated  events.Kind = "person.created"
	KindPersonUpdated  events.Kind = "person.updated"
	KindPersonTrashed  events.Kind = "person.trashed"
	KindPersonRestored events.Kind = "person.restored"
	KindPersonPurged   events.Kind = "person.purged"
)

var personChanges = changes{KindPersonCreated, KindPersonUpdated, KindPersonTrashed, KindPersonRestored, KindPersonPurged}

// The kinds of event that announce a project's changes; each carries the [Project] as it now is, but
// KindProjectPurged, which carries [Purged].
const (
	KindProjectCreated  events.Kind = "project.created"
	KindProjectUpdated  events.Kind = "project.updated"
	KindProjectTrashed  events.Kind = "project.trashed"
	KindProjectRestored events.Kind = "project.restored"
	KindProjectPurged   events.Kind = "project.purged"
)

var projectChanges = changes{KindProjectCreated, KindProjectUpdated, KindProjectTrashed, KindProjectRestored, KindProjectPurged}

// The kinds of event that announce a repository's changes; each carries the [Repo] as it now is, but
// KindRepoPurged, which carries [Purged].
const (
	KindRepoCreated  events.Kind = "repo.created"
	KindRepoUpdated  events.Kind = "repo.updated"
	KindRepoTrashed  events.Kind = "repo.trashed"
	KindRepoRestored events.Kind = "repo.restored"
	KindRepoPurged   events.Kind = "repo.purged"
)

var repoChanges = changes{KindRepoCreated, KindRepoUpdated, KindRepoTrashed, KindRepoRestored, KindRepoPurged}

// The kinds of event that announce a task's changes; each carries the [Task] as it now is, but
// KindTaskPurged, which carries [Purged].
const (
	KindTaskCreated  events.Kind = "task.created"
	KindTaskUpdated  events.Kind = "task.updated"
	KindTaskTrashed  events.Kind = "task.trashed"
	KindTaskRestored events.Kind = "task.restored"
	KindTaskPurged   events.Kind = "task.purged"
)

var taskChanges = changes{KindTaskCreated, KindTaskUpdated, KindTaskTrashed, KindTaskRestored, KindTaskPurged}

// EventSpecs lists the records' kinds of event, for the catalog.
func EventSpecs() []events.Spec {
	return slices.Concat(
		fileKind.specs(File{}),
		pageKind.specs(Page{}),
		personKind.specs(Person{}),
		projectKind.specs(Project{}),
		repoKind.specs(Repo{}),
		taskKind.specs(Task{}),
	)
}

// specs lists the kind's events with their payloads; zero is a zero record.
func (k *kind[T, In]) specs(zero T) []events.Spec {
	c := k.changes
	return append(events.Specs(zero, c.created, c.updated, c.trashed, c.restored), events.Spec{Kind: c.purged, Payload: Purged{}})
}
