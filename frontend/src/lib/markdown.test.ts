import { describe, expect, it } from 'vitest';
import { escapeHtml, isSafeUrl, renderMarkdown } from './markdown';

describe('renderMarkdown: blocks', () => {
  it.each([
    ['empty', '', ''],
    ['paragraph', 'hello world', '<p>hello world</p>'],
    ['lines join into one paragraph', 'one\ntwo', '<p>one two</p>'],
    ['blank line splits paragraphs', 'one\n\ntwo', '<p>one</p>\n<p>two</p>'],
    ['h1', '# Title', '<h1>Title</h1>'],
    ['h3 with closing hashes', '### Part ###', '<h3>Part</h3>'],
    ['h6', '###### small', '<h6>small</h6>'],
    ['seven hashes is text', '####### no', '<p>####### no</p>'],
    ['hash without space is text', '#tag', '<p>#tag</p>'],
    ['unordered list', '- a\n- b\n* c', '<ul><li>a</li><li>b</li><li>c</li></ul>'],
    ['ordered list', '1. a\n2) b', '<ol><li>a</li><li>b</li></ol>'],
    ['list kinds switch', '- a\n1. b', '<ul><li>a</li></ul>\n<ol><li>b</li></ol>'],
    ['indented continuation', '- a\n  more', '<ul><li>a more</li></ul>'],
    ['paragraph after list', '- a\n\ntext', '<ul><li>a</li></ul>\n<p>text</p>'],
    ['fenced code keeps lines and markup', '```\n**x**\n  y\n```', '<pre><code>**x**\n  y</code></pre>'],
    ['unclosed fence runs to the end', '```js\nlet a', '<pre><code>let a</code></pre>'],
    ['CRLF line endings', '# A\r\n\r\nb', '<h1>A</h1>\n<p>b</p>'],
  ])('%s', (_name, src, want) => {
    expect(renderMarkdown(src)).toBe(want);
  });
});

describe('renderMarkdown: inline', () => {
  it.each([
    ['bold', '**b**', '<p><strong>b</strong></p>'],
    ['bold underscores', '__b__', '<p><strong>b</strong></p>'],
    ['italic', '*i*', '<p><em>i</em></p>'],
    ['italic underscores', '_i_', '<p><em>i</em></p>'],
    ['snake_case is not italic', 'a_b_c', '<p>a_b_c</p>'],
    ['bold and italic', '**b** and *i*', '<p><strong>b</strong> and <em>i</em></p>'],
    ['code', 'run `go test`', '<p>run <code>go test</code></p>'],
    ['no emphasis inside code', '`**x**`', '<p><code>**x**</code></p>'],
    ['lone star stays', '2 * 3', '<p>2 * 3</p>'],
    ['https link', '[docs](https://example.com/a_b_c)', '<p><a href="https://example.com/a_b_c" target="_blank" rel="noopener noreferrer">docs</a></p>'],
    ['http link, bold label', '[**x**](http://e.com)', '<p><a href="http://e.com" target="_blank" rel="noopener noreferrer"><strong>x</strong></a></p>'],
    ['link query keeps escaped &', '[q](https://e.com/?a=1&b=2)', '<p><a href="https://e.com/?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">q</a></p>'],
    ['inline in headings', '## *hi*', '<h2><em>hi</em></h2>'],
    ['inline in list items', '- `x`', '<ul><li><code>x</code></li></ul>'],
  ])('%s', (_name, src, want) => {
    expect(renderMarkdown(src)).toBe(want);
  });
});

describe('renderMarkdown: safety', () => {
  it.each([
    ['script tag', '<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
    ['img onerror', '<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>'],
    ['javascript: link becomes text', '[x](javascript:alert(1))', '<p>x)</p>'],
    ['JavaScript: mixed case', '[x](JaVaScRiPt:alert`1`)', '<p>x</p>'],
    ['code span inside a URL is not a link', '[x](https://a.com/`y`)', '<p>x</p>'],
    ['data: link becomes text', '[x](data:text/html;base64,PHNjcmlwdD4=)', '<p>x</p>'],
    ['relative link becomes text', '[x](/api/undo)', '<p>x</p>'],
    ['protocol-relative link becomes text', '[x](//evil.com)', '<p>x</p>'],
    ['quote cannot break out of href', '[x](https://a"onmouseover="alert(1))', '<p><a href="https://a&quot;onmouseover=&quot;alert(1" target="_blank" rel="noopener noreferrer">x</a>)</p>'],
    ['html inside code stays escaped', '`<b>`', '<p><code>&lt;b&gt;</code></p>'],
    ['html inside fence stays escaped', '```\n<iframe>\n```', '<pre><code>&lt;iframe&gt;</code></pre>'],
    ['forged placeholder is stripped', '\u00000\u0000 `x`', '<p>0 <code>x</code></p>'],
    ['entity stays literal', '&lt;b&gt;', '<p>&amp;lt;b&amp;gt;</p>'],
  ])('%s', (_name, src, want) => {
    expect(renderMarkdown(src)).toBe(want);
  });

  it('never emits a tag it did not write', () => {
    const nasty = [
      '<svg/onload=alert(1)>',
      '[<b>](https://x.com)',
      '**<i>**',
      '# <h1>',
      '- <li>',
      '[a](https://x.com"><script>)',
    ].join('\n');
    const html = renderMarkdown(nasty);
    const tags = [...html.matchAll(/<\/?([a-z0-9]+)/g)].map((m) => m[1]);
    for (const t of tags) expect(['p', 'h1', 'ul', 'li', 'a', 'strong', 'em', 'code', 'pre']).toContain(t);
    expect(html).not.toMatch(/<script|<svg/i);
    expect(html).not.toMatch(/<[^>]*\son\w+=/i); // no event-handler attribute inside any tag
  });
});

describe('helpers', () => {
  it('escapeHtml escapes the five characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it.each([
    ['https://e.com', true],
    ['HTTP://E.COM', true],
    ['ftp://e.com', false],
    ['javascript:alert(1)', false],
    [' https://e.com', false],
    ['https://', false],
    ['mailto:a@b.c', false],
  ])('isSafeUrl(%j) → %s', (u, want) => expect(isSafeUrl(u)).toBe(want));
});
