// A small, safe Markdown renderer for task pages.
//
// Safety comes first and from one rule: the whole source is HTML-escaped before any
// Markdown is recognised, so every tag in the output is one this file wrote. Links are
// kept only for http and https URLs; anything else renders as its text.
//
// Supported: ATX headings (#..######), paragraphs, **bold** / __bold__, *italic* / _italic_,
// `code`, fenced code blocks (```), unordered (-, *, +) and ordered (1. / 1)) lists, and
// [text](http(s)://url) links. With a recordHref option, [Title](ensemble://kind/id) links open
// that record in the UI (a same-page hash link the option builds) and render as their title otherwise.
// With a record option (the records a text may name, spec 000 §4.1), a bare known id or
// ensemble://kind/id handle shows its record's title, linked the same way; an id in brackets right
// after its record's title (Title (id), “Title” (id)) links that title once. Code, link targets and
// URLs are left alone; keepIds leaves bare ids as written. No scheme but http(s) and the option's
// own #/ routes ever becomes an href.

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Whether an (already escaped) URL may become a link: http or https only. */
export function isSafeUrl(url: string): boolean {
  return /^https?:\/\/[^\s]+$/i.test(url);
}

// Placeholders keep finished HTML (code spans, links) away from later inline rules.
// NUL never survives into the escaped source, so it cannot be forged.
const HOLD = '\u0000';

/** A record a text may name by id: its kind and the title to show for it. */
export interface KnownRecord {
  kind: string;
  title: string;
}

export interface MarkdownOptions {
  /** The href a record link (ensemble://kind/id) opens, or null to show only its title. */
  recordHref?: (kind: string, id: string) => string | null;
  /** The record a bare id names, or null for an id this text does not know. */
  record?: (id: string) => KnownRecord | null;
  /** Bare ids stay as written (the person asked for ids); record links still show their titles. */
  keepIds?: boolean;
}

// A record link, after escaping: ensemble://kind/id.
const RECORD_URL = /^ensemble:\/\/(?:items\/)?([a-z_]+)\/([A-Za-z0-9_.:-]+)$/;
// A record handle at the start of a bare URL.
const HANDLE = /^ensemble:\/\/(?:items\/)?([a-z_]+)\/([A-Za-z0-9_-]+)/;
// A bare URL (left alone), or a word that may be a record's id.
const TOKEN = /([a-z][a-z0-9+.-]*:\/\/[^\s<>()[\]\u0000]+)|(?<![A-Za-z0-9_\u0000-])([A-Za-z0-9][A-Za-z0-9_-]{2,})(?![A-Za-z0-9_-])/g;
// What an id of Ensemble's looks like ("tsk_" and 16 hex digits), for dropping an unknown one.
const ID_LIKE = /^[a-z]{2,5}_[A-Za-z0-9]{4,}$/;

/** The HTML of a record's words: a link to its page when recordHref gives a safe #/ route, else the words. */
function recordHtml(kind: string, id: string, inner: string, opts: MarkdownOptions): string {
  const href = opts.recordHref?.(kind, id);
  if (!href || !/^#\/[\w/%.:-]*$/.test(href)) return inner;
  return `<a href="${href}" class="record-link" data-kind="${escapeHtml(kind)}">${inner}</a>`;
}

/** The ways a title may stand just before its id in brackets (escaped): quoted, whole, or its first clause. */
function titleForms(title: string): { text: string; words: string }[] {
  const t = escapeHtml(title.trim());
  if (!t) return [];
  const forms = [`“${t}”`, `&quot;${t}&quot;`, `‘${t}’`, t].map((text) => ({ text, words: t }));
  const clause = escapeHtml((/^(.+?)(?:[,;:.!?]\s|\s[-–—]\s)/.exec(title.trim())?.[1] ?? '').trim());
  if (clause.length >= 3 && clause !== t) forms.push({ text: clause, words: clause });
  return forms;
}

/**
 * s (escaped, code and links already held) with known ids and record handles as their records'
 * titles (held, so later rules leave them alone).
 */
function titleRecords(s: string, opts: MarkdownOptions, hold: (html: string) => string): string {
  const lookup = opts.record;
  if (!lookup) return s;
  const re = new RegExp(TOKEN.source, 'g');
  let out = '';
  let last = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const start = m.index;
    let end = start + m[0].length;
    let kind: string;
    let id: string;
    let title: string;
    if (m[1]) {
      const h = HANDLE.exec(m[1]);
      if (!h) continue; // a URL: left as written
      end = start + h[0].length;
      re.lastIndex = end;
      const rec = lookup(h[2]);
      if (!rec) continue;
      [kind, id, title] = [h[1], h[2], rec.title];
    } else {
      if (opts.keepIds) continue;
      const rec = lookup(m[2]);
      if (!rec) {
        // An unknown id in brackets just after a quoted title (older receipts) is dropped.
        const before = s.slice(last, start);
        const q = /(?:”|&quot;|’)\s*\($/.exec(before);
        if (q && s[end] === ')' && ID_LIKE.test(m[2])) {
          out += before.slice(0, before.length - q[0].length + q[0].indexOf('(')).replace(/\s+$/, '');
          last = end + 1;
          re.lastIndex = last;
        }
        continue;
      }
      [kind, id, title] = [rec.kind, m[2], rec.title];
    }
    let before = s.slice(last, start);
    let words = escapeHtml(title);
    // Title (id): the title before the brackets becomes the link, once.
    if (/\(\s*$/.test(before) && /^\s*\)/.test(s.slice(end))) {
      const lead = before.replace(/\(\s*$/, '').replace(/\s+$/, '');
      const form = titleForms(title).find((f) => lead.endsWith(f.text));
      if (form) {
        before = lead.slice(0, lead.length - form.text.length);
        words = form.words;
        end += /^\s*\)/.exec(s.slice(end))![0].length;
        re.lastIndex = end;
      }
    }
    out += before + hold(recordHtml(kind, id, words, opts));
    last = end;
  }
  return out + s.slice(last);
}

function renderInline(text: string, opts: MarkdownOptions = {}): string {
  const held: string[] = [];
  const hold = (html: string) => `${HOLD}${held.push(html) - 1}${HOLD}`;

  let s = text.replace(/`([^`]+)`/g, (_m, code: string) => hold(`<code>${code}</code>`));

  s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) => {
    const rec = RECORD_URL.exec(url);
    if (rec) return hold(recordHtml(rec[1], rec[2], emphasis(label.replace(/^@(?=\S)/, '')), opts));
    const inner = emphasis(label);
    if (!isSafeUrl(url) || url.includes(HOLD)) return hold(inner);
    return hold(`<a href="${url}" target="_blank" rel="noopener noreferrer">${inner}</a>`);
  });

  s = titleRecords(s, opts, hold);
  s = emphasis(s);
  return s.replace(new RegExp(`${HOLD}(\\d+)${HOLD}`, 'g'), (_m, i: string) => held[Number(i)]);
}

function emphasis(s: string): string {
  return s
    .replace(/\*\*(?=\S)(.+?)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)(.+?)__(?=[^\w]|$)/g, '$1<strong>$2</strong>')
    .replace(/\*(?=\S)([^*]+?)\*/g, '<em>$1</em>')
    .replace(/(^|[^\w])_(?=\S)([^_]+?)_(?=[^\w]|$)/g, '$1<em>$2</em>');
}

type ListKind = 'ul' | 'ol';

/** Renders Markdown to HTML that is safe to insert with innerHTML / {@html}. */
export function renderMarkdown(source: string, opts: MarkdownOptions = {}): string {
  const lines = escapeHtml(source.replace(/\u0000/g, '').replace(/\r\n?/g, '\n')).split('\n');
  const out: string[] = [];
  let para: string[] = [];
  let list: { kind: ListKind; items: string[] } | null = null;

  const flushPara = () => {
    if (para.length) out.push(`<p>${renderInline(para.join(' '), opts)}</p>`);
    para = [];
  };
  const flushList = () => {
    if (list) out.push(`<${list.kind}>${list.items.map((i) => `<li>${renderInline(i, opts)}</li>`).join('')}</${list.kind}>`);
    list = null;
  };
  const flush = () => {
    flushPara();
    flushList();
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];

    const fence = /^\s*```/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      i++;
      while (i < lines.length && !/^\s*```\s*$/.test(lines[i])) code.push(lines[i++]);
      out.push(`<pre><code>${code.join('\n')}</code></pre>`);
      continue;
    }

    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const n = heading[1].length;
      out.push(`<h${n}>${renderInline(heading[2], opts)}</h${n}>`);
      continue;
    }

    const ul = /^\s*[-*+]\s+(.*)$/.exec(line);
    const ol = ul ? null : /^\s*\d{1,9}[.)]\s+(.*)$/.exec(line);
    if (ul || ol) {
      flushPara();
      const kind: ListKind = ul ? 'ul' : 'ol';
      if (list && list.kind !== kind) flushList();
      if (!list) list = { kind, items: [] };
      list.items.push((ul ?? ol)![1]);
      continue;
    }

    if (line.trim() === '') {
      flush();
      continue;
    }

    // A plain line right after a list item continues that item.
    if (list && /^\s+\S/.test(line)) {
      list.items[list.items.length - 1] += ' ' + line.trim();
      continue;
    }
    flushList();
    para.push(line.trim());
  }
  flush();
  return out.join('\n');
}
