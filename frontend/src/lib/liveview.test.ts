import { describe, expect, it } from 'vitest';
import { frameSpans, keyEvent, liveCardOf, liveStatus, runStyle, type LiveCard } from './liveview';
import type { Message } from './node';

describe('frameSpans', () => {
  it('draws runs as spans with their look, and the cursor as its own cell', () => {
    const rows = frameSpans({
      rows: 3,
      cursor: { x: 3, y: 0 },
      payload: { rows: [[{ t: '$ ', fg: '#00ff00', b: true }, { t: 'ls' }], [{ t: 'a', bg: '#112233', u: true }], []] },
    });
    expect(rows).toEqual([
      [
        { text: '$ ', style: 'color:#00ff00;font-weight:bold' },
        { text: 'l', style: '' },
        { text: 's', style: '', cursor: true },
      ],
      [{ text: 'a', style: 'background:#112233;text-decoration:underline' }],
      [],
    ]);
  });

  it('puts the cursor past a row’s end, and fills rows the frame left out', () => {
    const rows = frameSpans({ rows: 2, cursor: { x: 4, y: 1 }, payload: { rows: [[{ t: 'ok' }]] } });
    expect(rows[1]).toEqual([
      { text: '    ', style: '' },
      { text: ' ', style: '', cursor: true },
    ]);
  });

  it('counts wide characters as one cell each', () => {
    const rows = frameSpans({ rows: 1, cursor: { x: 1, y: 0 }, payload: { rows: [[{ t: 'é✓x' }]] } });
    expect(rows[0].map((s) => s.text)).toEqual(['é', '✓', 'x']);
    expect(rows[0][1].cursor).toBe(true);
  });

  it('drops colours that are not #rrggbb', () => {
    expect(runStyle({ t: 'x', fg: 'red;background:url(x)', bg: '#abcdef', dim: true, i: true })).toBe('background:#abcdef;font-style:italic;opacity:.6');
  });
});

describe('keyEvent', () => {
  it.each([
    [{ key: 'a' }, { t: 'tty', text: 'a' }],
    [{ key: 'Enter' }, { t: 'tty-key', key: 'Enter' }],
    [{ key: 'ArrowUp' }, { t: 'tty-key', key: 'Up' }],
    [{ key: 'F5' }, { t: 'tty-key', key: 'F5' }],
    [{ key: 'c', ctrlKey: true }, { t: 'tty-key', key: 'Ctrl+C' }],
    [{ key: 'x', altKey: true }, null],
    [{ key: 'Shift' }, null],
  ])('%o', (e, want) => {
    expect(keyEvent({ ctrlKey: false, altKey: false, metaKey: false, ...e })).toEqual(want);
  });
});

describe('the live card', () => {
  const card: LiveCard = { type: 'live', kind: 'terminal', status: 'open', liveId: 'ts1', title: 'bash in scout', session: 'ts1', startedAt: '' };
  const msg = (data: unknown, kind = 'text') => ({ id: 'm', roomId: 'r', seq: 1, author: 'node', kind, body: '', data }) as unknown as Message;
  it('is a text message with data.type live', () => {
    expect(liveCardOf(msg(card))).toEqual(card);
    expect(liveCardOf(msg({ type: 'device_code' }))).toBeNull();
    expect(liveCardOf(msg(card, 'approval'))).toBeNull();
  });
  it('says who ended it and why', () => {
    expect(liveStatus(card, 'Scout')).toBe('Live');
    expect(liveStatus({ ...card, status: 'ended', endedBy: 'node', endReason: 'stopped' }, 'Scout')).toBe('Scout ended this live view.');
    expect(liveStatus({ ...card, status: 'ended', endedBy: 'node', endReason: 'closed' }, 'Scout')).toBe('Closed by Scout.');
    expect(liveStatus({ ...card, status: 'ended', endReason: 'closed' }, 'Scout')).toBe('The terminal has ended.');
  });
  it('may show a browser tab', () => {
    const tab: LiveCard = { type: 'live', kind: 'browser', status: 'open', liveId: 'lv0123456789abcdef', title: 'Your cart', tab: 't1', startedAt: '' };
    expect(liveCardOf(msg(tab))).toEqual(tab);
    expect(liveCardOf(msg({ ...tab, tab: undefined }))).toBeNull();
    expect(liveStatus({ ...tab, status: 'ended', endReason: 'closed' }, 'Scout')).toBe('The tab has closed.');
  });
});
