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

export interface MarkdownOptions {
  /** The href a record link (ensemble://kind/id) opens, or null to show only its title. */
  recordHref?: (kind: string, id: string) => string | null;
}

// A record link, after escaping: ensemble://kind/id.
const RECORD_URL = /^ensemble:\/\/([a-z_]+)\/([A-Za-z0-9_.:-]+)$/;

function renderInline(text: string, opts: MarkdownOptions = {}): string {
  const held: string[] = [];
  const hold = (html: string) => `${HOLD}${held.push(html) - 1}${HOLD}`;

  let s = text.replace(/`([^`]+)`/g, (_m, code: string) => hold(`<code>${code}</code>`));

  s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) => {
    const inner = emphasis(label);
    const rec = RECORD_URL.exec(url);
    if (rec) {
      const href = opts.recordHref?.(rec[1], rec[2]);
      if (!href || !/^#\/[\w/%.:-]*$/.test(href)) return hold(inner);
      return hold(`<a href="${href}" class="record-link" data-kind="${rec[1]}">${inner}</a>`);
    }
    if (!isSafeUrl(url) || url.includes(HOLD)) return hold(inner);
    return hold(`<a href="${url}" target="_blank" rel="noopener noreferrer">${inner}</a>`);
  });

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
