// Records by title (spec 000 §4.1): the records a reply may name by id (the turn's "refs" frame, its
// calls' refs, and the other records of the conversation), and what a reply, a tool row or a live
// stream shows for them. Ids are for machines; people read titles. The Markdown side (links, escaping)
// is in markdown.ts, which takes recordOptions' answer.

import type { KnownRecord, MarkdownOptions } from './markdown';

export interface Ref {
  kind: string;
  id: string;
  title: string;
}

interface HasRefs {
  role?: string;
  text?: string;
  refs?: readonly Ref[] | null;
  /** Records saved on the message as {kind, id, label} (spec 000 §4.1's assistant_messages.mentions), when the runtime sends them. */
  mentions?: readonly { kind: string; id: string; label?: string; title?: string }[] | null;
  tools?: readonly { refs?: readonly Ref[] | null }[] | null;
}

/** The most records one reply is shown with. */
const MAX_REFS = 400;

/** lists as one, each id once (the first list that names it wins), records without an id or title left out. */
export function mergeRefs(...lists: (readonly Ref[] | null | undefined)[]): Ref[] {
  const seen = new Set<string>();
  const out: Ref[] = [];
  for (const list of lists) {
    for (const r of list ?? []) {
      if (!r || typeof r.id !== 'string' || !r.id || typeof r.title !== 'string' || !r.title.trim() || seen.has(r.id)) continue;
      seen.add(r.id);
      out.push({ kind: typeof r.kind === 'string' ? r.kind : '', id: r.id, title: r.title });
      if (out.length >= MAX_REFS) return out;
    }
  }
  return out;
}

/** The records a message knows itself: its saved refs, then its calls' refs. */
export function ownRefs(m: HasRefs): Ref[] {
  const saved = Array.isArray(m.mentions) ? m.mentions.map((x) => ({ kind: x?.kind, id: x?.id, title: x?.title ?? x?.label ?? '' }) as Ref) : null;
  return mergeRefs(m.refs, saved, ...(m.tools ?? []).map((t) => t.refs));
}

/**
 * The records the message at index i may name: its own, then those of the messages before it
 * (nearest first), then those after, then extra (what this window learnt from the conversation's
 * turns' "refs" frames).
 */
export function refsFor(messages: readonly HasRefs[], i: number, extra?: readonly Ref[] | null): Ref[] {
  const lists: (readonly Ref[] | null | undefined)[] = [ownRefs(messages[i] ?? {})];
  for (let j = i - 1; j >= 0; j--) lists.push(ownRefs(messages[j]));
  for (let j = i + 1; j < messages.length; j++) lists.push(ownRefs(messages[j]));
  lists.push(extra);
  return mergeRefs(...lists);
}

/** The person's question a reply answers: the nearest user message before index i. */
export function questionFor(messages: readonly HasRefs[], i: number): string {
  for (let j = i - 1; j >= 0; j--) if (messages[j].role === 'user') return messages[j].text ?? '';
  return '';
}

/** Whether the question asks for ids, which then stay as written. */
export function askedForIds(question: string): boolean {
  return /\b(ids?|uuids?|identifiers?)\b/i.test(question);
}

/**
 * Each record's label: its title, or for records that share a title, the title with its kind
 * ("Launch (project)") when the kinds differ, else with a number ("Launch (2)").
 */
export function refLabels(refs: readonly Ref[]): Map<string, KnownRecord> {
  const byTitle = new Map<string, Ref[]>();
  for (const r of refs) {
    const k = r.title.trim().toLowerCase();
    byTitle.set(k, [...(byTitle.get(k) ?? []), r]);
  }
  const out = new Map<string, KnownRecord>();
  for (const group of byTitle.values()) {
    group.forEach((r, n) => {
      const title = r.title.trim();
      let label = title;
      if (group.length > 1) label = group.filter((x) => x.kind === r.kind).length === 1 && r.kind ? `${title} (${r.kind})` : `${title} (${n + 1})`;
      out.set(r.id, { kind: r.kind, title: label });
    });
  }
  return out;
}

/** The Markdown options that show refs by title: bare ids linked unless the question asked for ids. */
export function recordOptions(refs: readonly Ref[], question: string, recordHref: (kind: string, id: string) => string | null): MarkdownOptions {
  const labels = refLabels(refs);
  return { recordHref, record: (id) => labels.get(id) ?? null, keepIds: askedForIds(question) };
}

const ID_CHAR = /[A-Za-z0-9_-]/;

/**
 * text as it may show while it still streams: a half-written record link ([Title](ensemble://…) or
 * a bare ensemble:// handle) or known id at its very end is held back until the rest arrives.
 */
export function holdBack(text: string, refs: readonly Ref[]): string {
  // A record link still being written: "[Title", "[Title](", "[Title](ensemble://task/ts".
  const open = text.lastIndexOf('[');
  if (open >= 0 && text.length - open <= 300) {
    const tail = text.slice(open);
    const m = /^\[[^\]\n]*(?:\](?:\(([^)\s]*))?)?$/.exec(tail);
    if (m && (m[1] === undefined || 'ensemble://'.startsWith(m[1]) || m[1].startsWith('ensemble://'))) {
      // "[x]" followed by nothing yet may still become a link; "[x](https://…" is not a record.
      return text.slice(0, open);
    }
  }
  // A bare handle at the end, or the start of one.
  const word = /\S*$/.exec(text)![0];
  const w = word.replace(/^[(“"'‘]+/, '');
  if (w && (w.startsWith('ensemble://') || (w.length >= 3 && 'ensemble://'.startsWith(w)))) return text.slice(0, text.length - w.length);
  // A known id not yet whole.
  let k = text.length;
  while (k > 0 && ID_CHAR.test(text[k - 1])) k--;
  const tok = text.slice(k);
  if (tok.length >= 2 && refs.some((r) => r.id !== tok && r.id.startsWith(tok))) return text.slice(0, k);
  return text;
}

/**
 * text for plain display (a tool row's receipt, a preview): record links as their labels, and the
 * known ids as their titles (an id in brackets just after its title, “Draft brief” (tsk_1), adds
 * nothing), unless keepIds.
 */
export function plainTitles(text: string, refs: readonly Ref[], keepIds = false): string {
  if (!text) return text;
  const labels = refLabels(refs);
  let s = text.replace(/\[@?([^\]\n]+)\]\(ensemble:\/\/(?:items\/)?[a-z_]+\/[A-Za-z0-9_-]+\)/g, '$1');
  s = s.replace(/ensemble:\/\/(?:items\/)?[a-z_]+\/([A-Za-z0-9_-]+)/g, (m, id: string) => labels.get(id)?.title ?? m);
  if (keepIds || !labels.size) return s;
  const re = /(?<![A-Za-z0-9_-])[A-Za-z0-9][A-Za-z0-9_-]{2,}(?![A-Za-z0-9_-])/g;
  let out = '';
  let last = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const rec = labels.get(m[0]);
    if (!rec) continue;
    let before = s.slice(last, m.index);
    let end = m.index + m[0].length;
    let show = rec.title;
    const close = /^\s*\)/.exec(s.slice(end));
    if (close && /\(\s*$/.test(before)) {
      const lead = before.replace(/\s*\(\s*$/, '');
      const title = refs.find((r) => r.id === m![0])!.title.trim();
      if ([`“${title}”`, `"${title}"`, title].some((f) => lead.endsWith(f))) {
        before = lead;
        show = '';
        end += close[0].length;
        re.lastIndex = end;
      }
    }
    out += before + show;
    last = end;
  }
  return out + s.slice(last);
}
