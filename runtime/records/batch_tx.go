package records

import "github.com/ensemblework/ensemble/runtime/ledger"

// Tx is the batch's transaction, for a package that writes its own rows (a run, a Needs me card)
// in the same transaction as the records it creates. Rows written through it with ExecContext are
// not part of the Undo group.
func (b *Batch) Tx() *ledger.Tx { return b.t }
