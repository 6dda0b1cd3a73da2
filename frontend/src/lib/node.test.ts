import { describe, expect, it } from 'vitest';
import { applyFrame, cardOf, chipLabel, preview, slugOf, statusLine, upsertMessage, type Frame, type Message } from './node';

const msg = (over: Partial<Message>): Message => ({
  id: 'm1',
  roomId: 'r1',
  seq: 1,
  author: 'person',
  kind: 'text',
  body: 'hi',
  private: false,
  createdAt: '2026-01-01T00:00:00Z',
  ...over,
});

describe('upsertMessage', () => {
  const cases: { name: string; list: Message[]; m: Message; want: string[] }[] = [
    { name: 'appends a newer one', list: [msg({})], m: msg({ id: 'm2', seq: 2 }), want: ['m1', 'm2'] },
    { name: 'replaces by id', list: [msg({}), msg({ id: 'm2', seq: 2 })], m: msg({ body: 'edited' }), want: ['m1', 'm2'] },
    { name: 'keeps seq order', list: [msg({ id: 'm3', seq: 3 })], m: msg({ id: 'm2', seq: 2 }), want: ['m2', 'm3'] },
    {
      name: 'the sent copy takes the place of the one being sent',
      list: [msg({ id: 'local:c1', clientId: 'c1', seq: Number.MAX_SAFE_INTEGER })],
      m: msg({ id: 'm9', clientId: 'c1', seq: 9 }),
      want: ['m9'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => expect(upsertMessage(c.list, c.m).map((m) => m.id)).toEqual(c.want));
  }
  it('replaces the body too', () => expect(upsertMessage([msg({})], msg({ body: 'edited' }))[0].body).toBe('edited'));
});

describe('applyFrame', () => {
  const f = (over: Partial<Frame>): Frame => ({ roomId: 'r1', nodeId: 'n1', turnId: 't1', private: false, type: 'text', ...over });
  it('joins text and keeps one chip per call', () => {
    let r = applyFrame([], f({ type: 'tool', tool: { callId: 'c1', name: 'search_pages', status: 'running' } }));
    r = applyFrame(r, f({ text: 'Hello' }));
    r = applyFrame(r, f({ text: ', world' }));
    r = applyFrame(r, f({ type: 'tool', tool: { callId: 'c1', name: 'search_pages', status: 'done', summary: 'Found 2' } }));
    expect(r).toHaveLength(1);
    expect(r[0].text).toBe('Hello, world');
    expect(r[0].tools).toEqual([{ callId: 'c1', name: 'search_pages', status: 'done', summary: 'Found 2' }]);
  });
  it('keeps turns apart and skips refs', () => {
    let r = applyFrame([], f({ text: 'a' }));
    r = applyFrame(r, f({ turnId: 't2', text: 'b' }));
    r = applyFrame(r, f({ type: 'refs' }));
    expect(r.map((x) => x.text)).toEqual(['a', 'b']);
  });
});

describe('words', () => {
  it('says what a node does', () => {
    expect(statusLine('Scout', { roomId: 'r', nodeId: 'n', state: 'thinking', private: false })).toBe('Scout is thinking…');
    expect(statusLine('Scout', { roomId: 'r', nodeId: 'n', state: 'waiting', private: false })).toBe('Scout is waiting for you');
    expect(statusLine('Scout', { roomId: 'r', nodeId: 'n', state: 'idle', private: false })).toBe('');
  });
  it('names a chip', () => {
    expect(chipLabel({ callId: 'c', name: 'create_task', status: 'running' })).toBe('Create task…');
    expect(chipLabel({ callId: 'c', name: 'create_task', status: 'done', summary: 'Made “Call Mira”' })).toBe('Made “Call Mira”');
  });
  it('previews and slugs', () => {
    expect(preview(msg({ body: 'a\n b' }))).toBe('You: a b');
    expect(slugOf('Café Writer 2')).toBe('cafe-writer-2');
  });
  it('reads a card only from an approval', () => {
    expect(cardOf(msg({ kind: 'approval', data: { type: 'tools', status: 'pending' } }))?.status).toBe('pending');
    expect(cardOf(msg({ kind: 'text', data: { type: 'tools' } }))).toBeNull();
  });
});
