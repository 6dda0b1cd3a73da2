import { describe, expect, it } from 'vitest';
import {
  discardedRow,
  foldReads,
  isFinishedRead,
  stepsLabel,
  isApplied,
  applyTurnEvent,
  checkKey,
  errorText,
  isThinking,
  keyStateText,
  mergeTool,
  messageBody,
  messageError,
  normalizeSettings,
  proposals,
  receipts,
  recordHref,
  SSEParser,
  startTurn,
  streamTurn,
  thinkingText,
  toolLabel,
  turnEvent,
  turnMessages,
  undoable,
  riskNote,
  validateSettings,
  withRow,
  workSummary,
  type ToolRow,
  type Turn,
  type TurnEvent,
  replyHtml,
  routePath,
  providerOptions,
  planStatus,
  planModels,
  effortsFor,
  EFFORTS,
  takesKey,
  takesBaseUrl,
  planOf,
  modelIsSet,
  withProvider,
  normalizeAreas,
} from './assistant';
import { renderMarkdown } from './markdown';
import { parseRoute } from './route';
import type { Agent } from './settings';

describe('SSEParser', () => {
  it('reads frames split anywhere, skipping comments', () => {
    const body = ': keepalive\n\nevent: text\ndata: {"text":"Hi"}\n\nevent: done\ndata: {"reply":{}}\n\n';
    for (let size = 1; size <= body.length; size++) {
      const p = new SSEParser();
      const got = [];
      for (let i = 0; i < body.length; i += size) got.push(...p.push(body.slice(i, i + size)));
      expect(got, `chunks of ${size}`).toEqual([
        { event: 'text', data: '{"text":"Hi"}' },
        { event: 'done', data: '{"reply":{}}' },
      ]);
    }
  });

  it('handles CRLF, CR, multi-line data, ids, a BOM and frames without an event', () => {
    const p = new SSEParser();
    const got = [
      ...p.push('\ufeffid: 7\r\ndata: a\r\ndata: b\r'),
      ...p.push('\n\r\nevent:x\rdata:no space\r\r\n'),
    ];
    expect(got).toEqual([
      { event: 'message', data: 'a\nb', id: '7' },
      { event: 'x', data: 'no space', id: '7' },
    ]);
  });

  it('drops a frame the stream never closed', () => {
    const p = new SSEParser();
    expect(p.push('event: text\ndata: {"text":"cut"}\n')).toEqual([]);
    expect(p.end()).toEqual([]);
  });
});

describe('turnEvent', () => {
  it('reads each kind and refuses what it does not know', () => {
    expect(turnEvent({ event: 'conversation', data: '{"conversationId":"c1"}' })).toEqual({ type: 'conversation', conversationId: 'c1' });
    expect(turnEvent({ event: 'text', data: '{"text":"x"}' })).toEqual({ type: 'text', text: 'x' });
    expect(turnEvent({ event: 'tool', data: '{"tool":{"callId":"a","name":"n","status":"running"}}' })?.type).toBe('tool');
    expect(turnEvent({ event: 'error', data: '{"error":"late","kind":"timeout"}' })).toEqual({ type: 'error', error: 'late', kind: 'timeout' });
    expect(turnEvent({ event: 'error', data: '{"error":"x","kind":"weird"}' })).toEqual({ type: 'error', error: 'x', kind: 'failed' });
    expect(turnEvent({ event: 'text', data: 'not json' })).toBeNull();
    expect(turnEvent({ event: 'other', data: '{}' })).toBeNull();
    expect(turnEvent({ event: 'tool', data: '{"tool":{}}' })).toBeNull();
  });
});

const row = (callId: string, status: ToolRow['status'], more: Partial<ToolRow> = {}): ToolRow => ({ callId, name: 'hub_create_tasks', status, ...more });

function run(events: TurnEvent[], t0 = 1000): Turn {
  let t = startTurn('make two tasks', null, t0);
  events.forEach((ev, i) => (t = applyTurnEvent(t, ev, t0 + (i + 1) * 1000)));
  return t;
}

describe('a turn', () => {
  it('thinks until text streams, then builds the text from deltas', () => {
    let t = startTurn('hi', null, 0);
    expect(isThinking(t)).toBe(true);
    expect(thinkingText(t, 2500)).toBe('Thinking…');
    expect(thinkingText(t, 4200)).toBe('Thinking… 4s');
    t = applyTurnEvent(t, { type: 'conversation', conversationId: 'c1' }, 1);
    expect(t.conversationId).toBe('c1');
    t = applyTurnEvent(t, { type: 'text', text: 'Hel' }, 2);
    t = applyTurnEvent(t, { type: 'text', text: 'lo' }, 3);
    expect(t.text).toBe('Hello');
    expect(isThinking(t)).toBe(false);
  });

  it('merges tool rows by callId, keeping their order', () => {
    const t = run([
      { type: 'tool', tool: row('a', 'running', { isWrite: true }) },
      { type: 'tool', tool: row('b', 'running') },
      { type: 'tool', tool: row('a', 'done', { summary: 'Added 2 tasks', group: 'g1' }) },
    ]);
    expect(t.tools.map((r) => [r.callId, r.status])).toEqual([
      ['a', 'done'],
      ['b', 'running'],
    ]);
    expect(t.tools[0]).toMatchObject({ isWrite: true, summary: 'Added 2 tasks', group: 'g1' });
    // b still runs: its row shows the work, not "Thinking…".
    expect(isThinking(t)).toBe(false);
  });

  it('thinks again after a tool ends, counting from then', () => {
    const t = run([
      { type: 'tool', tool: row('a', 'running') },
      { type: 'tool', tool: row('a', 'done') },
    ]);
    expect(isThinking(t)).toBe(true);
    expect(t.thinkingSince).toBe(3000);
  });

  it('ends with done: the streamed text stays, the reply fills what did not stream', () => {
    const t = run([
      { type: 'text', text: 'On it.' },
      { type: 'tool', tool: row('a', 'running') },
      { type: 'done', reply: { conversationId: 'c9', text: 'Done.', tools: [row('a', 'done', { summary: 's' })] } },
    ]);
    expect(t.phase).toBe('done');
    expect(t.text).toBe('On it.');
    expect(t.conversationId).toBe('c9');
    expect(t.tools[0].status).toBe('done');
    const quiet = run([{ type: 'done', reply: { conversationId: 'c', text: 'Only here.', tools: null } }]);
    expect(quiet.text).toBe('Only here.');
    // Nothing after the end.
    expect(applyTurnEvent(t, { type: 'text', text: 'more' }, 9)).toBe(t);
  });

  it('ends with an error of each kind, in one sentence', () => {
    const failed = run([{ type: 'text', text: 'Part' }, { type: 'tool', tool: row('a', 'running') }, { type: 'error', error: 'm could not answer: 500', kind: 'failed' }]);
    expect(failed.phase).toBe('error');
    expect(failed.text).toBe('Part');
    expect(failed.tools[0].status).toBe('error');
    expect(errorText(failed.error, failed.errorKind)).toBe('m could not answer: 500');
    expect(errorText('', 'timeout')).toMatch(/did not answer in time/);
    expect(errorText('', 'failed')).toMatch(/could not answer/);
    expect(errorText('context canceled', 'stopped')).toBe('Stopped.');
    const [q, a] = turnMessages(run([{ type: 'error', error: 'x', kind: 'stopped' }]));
    expect(q).toMatchObject({ role: 'user', text: 'make two tasks' });
    expect(a).toMatchObject({ role: 'assistant', stopped: true, error: 'Stopped.' });
    expect(messageError(a)).toBe('Stopped.');
  });
});

describe('messages and rows', () => {
  it('reads saved errors either way', () => {
    expect(messageError({ id: '1', role: 'assistant', text: 'The model timed out.', error: true })).toBe('The model timed out.');
    expect(messageBody({ id: '1', role: 'assistant', text: 'The model timed out.', error: true })).toBe('');
    expect(messageError({ id: '1', role: 'assistant', text: 'partial', error: 'Lost.' })).toBe('Lost.');
    expect(messageBody({ id: '1', role: 'assistant', text: 'partial', error: 'Lost.' })).toBe('partial');
    expect(messageError({ id: '1', role: 'assistant', text: 'x', stopped: true })).toBe('Stopped.');
    expect(messageError({ id: '1', role: 'assistant', text: 'x' })).toBe('');
  });

  it('splits proposals from receipts and offers Undo or Redo on landed writes', () => {
    const rows = [row('a', 'proposed', { proposalId: 'p1', isWrite: true }), row('b', 'done', { isWrite: true, group: 'g' }), row('c', 'done')];
    expect(proposals(rows).map((r) => r.callId)).toEqual(['a']);
    expect(receipts(rows).map((r) => r.callId)).toEqual(['b', 'c']);
    expect(undoable(rows[1])).toBe('undo');
    expect(undoable({ ...rows[1], undone: true })).toBe('redo');
    expect(undoable(rows[2])).toBeNull();
    expect(undoable(rows[0])).toBeNull();
    expect(undoable({ ...rows[1], noUndo: true })).toBeNull(); // an agent run that started
    expect(riskNote(rows[0])).toBe('');
    expect(riskNote({ ...rows[0], risk: 'high', noUndo: true })).toBe('High risk, cannot be undone');
    expect(riskNote({ ...rows[0], risk: 'medium', noUndo: true })).toBe('Cannot be undone');
    expect(workSummary([...rows, row('d', 'error')])).toBe('4 steps · 1 change · 1 failed');
    expect(toolLabel('hub_create_tasks')).toBe('Create tasks');
  });

  it('folds runs of three or more finished reads once a reply has more than four calls', () => {
    const read = (id: string) => row(id, 'done');
    const write = (id: string) => row(id, 'done', { isWrite: true, group: 'g' + id });
    const shape = (items: ReturnType<typeof foldReads>) => items.map((it) => (it.kind === 'row' ? it.row.callId : `[${it.rows.map((r) => r.callId).join('')}]`));
    // Four calls or fewer: nothing folds, however many reads.
    expect(shape(foldReads([read('a'), read('b'), read('c'), read('d')]))).toEqual(['a', 'b', 'c', 'd']);
    // Five: the run of three reads folds, the write stays a row.
    expect(shape(foldReads([read('a'), read('b'), read('c'), write('w'), read('d')]))).toEqual(['[abc]', 'w', 'd']);
    // A run of two does not fold; a write, a failure or a running call breaks a run.
    expect(shape(foldReads([read('a'), read('b'), write('w'), read('c'), read('d'), row('e', 'error'), read('f'), read('g'), read('h')]))).toEqual([
      'a',
      'b',
      'w',
      'c',
      'd',
      'e',
      '[fgh]',
    ]);
    expect(shape(foldReads([read('a'), read('b'), read('c'), row('r', 'running'), read('d'), read('e'), read('f')]))).toEqual(['[abc]', 'r', '[def]']);
    // The count is the reply's: held writes shown apart still count.
    expect(shape(foldReads([read('a'), read('b'), read('c')], 5))).toEqual(['[abc]']);
    expect(shape(foldReads([read('a'), read('b'), read('c')], 4))).toEqual(['a', 'b', 'c']);
    // All reads: one row; its key is stable as more land.
    const items = foldReads(['a', 'b', 'c', 'd', 'e', 'f'].map(read));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: 'reads', key: 'a' });
    expect(isFinishedRead(write('w'))).toBe(false);
    expect(isFinishedRead(row('x', 'waiting'))).toBe(false);
    expect(stepsLabel(3)).toBe('3 steps');
    expect(foldReads([])).toEqual([]);
  });

  it('marks a discarded proposal as the server keeps it', () => {
    const r = row('a', 'proposed', { proposalId: 'p1', isWrite: true, preview: 'Create task “Plan the trip”' });
    const d = discardedRow(r);
    expect(d).toMatchObject({ callId: 'a', status: 'discarded', proposalId: 'p1', summary: 'Discarded: Create task “Plan the trip”' });
    expect(proposals([d])).toEqual([]);
    expect(receipts([d])).toEqual([d]);
    expect(isApplied(d)).toBe(false);
    expect(undoable(d)).toBeNull();
  });

  it('marks a held write applied wherever it was applied', () => {
    expect(isApplied(row('a', 'done', { proposalId: 'p1', isWrite: true, group: 'g' }))).toBe(true);
    expect(isApplied(row('a', 'proposed', { proposalId: 'p1' }))).toBe(false);
    expect(isApplied(row('b', 'done', { isWrite: true, group: 'g' }))).toBe(false);
    expect(isApplied({ ...row('c', 'done'), applied: true })).toBe(true);
  });

  it('merges an applied row into the message that holds it', () => {
    const msgs = [
      { id: 'm1', role: 'assistant' as const, text: '', tools: [row('a', 'proposed', { proposalId: 'p' })] },
      { id: 'm2', role: 'assistant' as const, text: '', tools: [row('b', 'done')] },
    ];
    const next = withRow(msgs, { ...row('a', 'done', { group: 'g' }), applied: true });
    expect(next[0].tools?.[0]).toMatchObject({ status: 'done', group: 'g', applied: true, proposalId: 'p' });
    expect(next[1]).toBe(msgs[1]);
    expect(mergeTool([], row('z', 'running'))).toHaveLength(1);
  });

  it('links records to their pages, safely', () => {
    expect(recordHref('task', 'tsk_1')).toBe('#/task/tsk_1');
    expect(recordHref('page', 'p')).toBeNull();
    const html = renderMarkdown('See [Draft brief](ensemble://task/tsk_1) and [Notes](ensemble://page/p1).', { recordHref });
    expect(html).toContain('<a href="#/task/tsk_1" class="record-link" data-kind="task">Draft brief</a>');
    expect(html).toContain('Notes');
    expect(html).not.toContain('ensemble://');
    expect(renderMarkdown('[x](ensemble://task/a"onmouseover=1)', { recordHref })).not.toContain('onmouseover=1"');
    // Without the option a record link is its title.
    expect(renderMarkdown('[T](ensemble://task/t1)')).toBe('<p>T</p>');
  });
});

describe('settings', () => {
  const base = normalizeSettings({ provider: 'openai', model: ' gpt-5 ', baseUrl: ' http://127.0.0.1:11434/v1 ', effort: 'high', writePolicy: 'preview' });

  it('fills defaults for what is missing or unknown', () => {
    expect(normalizeSettings(null)).toEqual({
      provider: 'anthropic',
      model: '',
      baseUrl: '',
      effort: '',
      writePolicy: 'immediate',
      allowedWriteAreas: ['tasks', 'pages', 'projects', 'people', 'repos', 'agents', 'workflows'],
    });
    expect(normalizeSettings({ allowedWriteAreas: ['pages', 'mail', 'tasks'] as never }).allowedWriteAreas).toEqual(['tasks', 'pages']);
    expect(normalizeSettings({ allowedWriteAreas: [] }).allowedWriteAreas).toEqual([]);
    expect(normalizeAreas('tasks')).toHaveLength(7);
    expect(normalizeSettings({ provider: 'gemini' as never, writePolicy: 'later' as never }).writePolicy).toBe('immediate');
  });

  it('trims and checks what is saved', () => {
    const v = validateSettings(base);
    expect(v).toEqual({ ok: true, value: { ...base, model: 'gpt-5', baseUrl: 'http://127.0.0.1:11434/v1' } });
    // Anthropic takes no base URL here: it is dropped.
    const a = validateSettings({ ...base, provider: 'anthropic', baseUrl: 'whatever' });
    expect(a.ok && a.value.baseUrl).toBe('');
    expect(validateSettings({ ...base, baseUrl: 'ftp://x' })).toMatchObject({ ok: false, field: 'baseUrl' });
    expect(validateSettings({ ...base, baseUrl: 'not a url' })).toMatchObject({ ok: false, field: 'baseUrl' });
    expect(validateSettings({ ...base, model: 'two words' })).toMatchObject({ ok: false, field: 'model' });
    expect(validateSettings({ ...base, effort: 'max' })).toMatchObject({ ok: false, field: 'effort' });
    expect(validateSettings({ ...base, writePolicy: 'x' as never })).toMatchObject({ ok: false, field: 'writePolicy' });
    // An empty model is allowed: it means "not chosen yet".
    expect(validateSettings({ ...base, model: '' }).ok).toBe(true);
  });

  it('says where a key comes from, and checks one before saving', () => {
    expect(keyStateText({ id: 'anthropic', name: 'A', hasKey: true, keyFrom: 'settings' })).toBe('Key saved');
    expect(keyStateText({ id: 'anthropic', name: 'A', hasKey: true })).toBe('Key saved');
    expect(keyStateText({ id: 'anthropic', name: 'A', hasKey: true, keyFrom: 'environment' })).toBe('From environment');
    expect(keyStateText({ id: 'openai', name: 'O', hasKey: true, keyFrom: 'OPENAI_API_KEY' })).toBe('From environment');
    expect(keyStateText({ id: 'openai', name: 'O', hasKey: false })).toBe('No key');
    expect(checkKey('  sk-ant-1234567890 ')).toEqual({ ok: true, key: 'sk-ant-1234567890' });
    expect(checkKey('')).toMatchObject({ ok: false });
    expect(checkKey('sk ant 123456')).toMatchObject({ ok: false });
    expect(checkKey('abc')).toMatchObject({ ok: false });
  });
});

describe('streamTurn', () => {
  const sse = (chunks: string[], status = 200, type = 'text/event-stream') =>
    (async () =>
      new Response(
        new ReadableStream({
          start(c) {
            for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch));
            c.close();
          },
        }),
        { status, headers: { 'Content-Type': type } },
      )) as unknown as typeof fetch;

  it('streams events in order', async () => {
    const got: TurnEvent[] = [];
    await streamTurn({ text: 'hi' }, (e) => got.push(e), undefined,
      sse(['event: conversation\ndata: {"conversationId":"c"}\n\nevent: te', 'xt\ndata: {"text":"Hé"}\n\n: keepalive\n\n', 'event: done\ndata: {"reply":{"conversationId":"c","text":"Hé","tools":[]}}\n\n']));
    expect(got.map((e) => e.type)).toEqual(['conversation', 'text', 'done']);
  });

  it('ends a cut stream with an error, and rejects a refused turn with its sentence', async () => {
    const got: TurnEvent[] = [];
    await streamTurn({ text: 'hi' }, (e) => got.push(e), undefined, sse(['event: text\ndata: {"text":"a"}\n\n']));
    expect(got.at(-1)).toMatchObject({ type: 'error', kind: 'failed' });
    await expect(streamTurn({ text: '' }, () => {}, undefined, sse(['{"error":"Write a message first."}'], 400, 'application/json'))).rejects.toThrow(
      'Write a message first.',
    );
  });
});

describe('the refs frame', () => {
  const ref = { kind: 'task', id: 'tsk_0123456789abcdef', title: 'Draft brief' };

  it('is read from the stream, kept on the turn and on its message', () => {
    expect(turnEvent({ event: 'refs', data: JSON.stringify({ refs: [ref, { kind: 'task', id: '', title: 'x' }] }) })).toEqual({ type: 'refs', refs: [ref] });
    expect(turnEvent({ event: 'refs', data: '{}' })).toEqual({ type: 'refs', refs: [] });
    const t = run([
      { type: 'refs', refs: [ref] },
      { type: 'text', text: `Added ${ref.id}` },
      { type: 'done', reply: { conversationId: 'c', text: '', tools: [] } },
    ]);
    expect(t.refs).toEqual([ref]);
    expect(turnMessages(t)[1].refs).toEqual([ref]);
  });

  it('streams a reply with titles, holding back a half-written id', () => {
    expect(replyHtml(`Added ${ref.id}.`, [ref], 'add it')).toBe(`<p>Added <a href="#/task/${ref.id}" class="record-link" data-kind="task">Draft brief</a>.</p>`);
    expect(replyHtml('Added tsk_0123', [ref], 'add it', true)).toBe('<p>Added</p>');
    expect(replyHtml(`Added ${ref.id}`, [ref], 'what is its id?')).toBe(`<p>Added ${ref.id}</p>`);
  });

  it('streamTurn passes the frame on', async () => {
    const got: TurnEvent[] = [];
    const f = (async () =>
      new Response(`event: refs\ndata: {"refs":[${JSON.stringify(ref)}]}\n\nevent: done\ndata: {"reply":{"conversationId":"c","text":"x","tools":[]}}\n\n`, {
        headers: { 'Content-Type': 'text/event-stream' },
      })) as unknown as typeof fetch;
    await streamTurn({ text: 'hi', path: '/board' }, (e) => got.push(e), undefined, f);
    expect(got[0]).toEqual({ type: 'refs', refs: [ref] });
  });
});

describe('routePath', () => {
  it('names the open screen as the playbooks read it', () => {
    expect(routePath(parseRoute(''))).toBe('/board');
    expect(routePath(parseRoute('#/task/tsk_1'))).toBe('/tasks/tsk_1');
    expect(routePath(parseRoute('#/task/tsk_1/run/job_2'))).toBe('/tasks/tsk_1/runs/job_2');
    expect(routePath(parseRoute('#/needs'))).toBe('/needs');
    expect(routePath(parseRoute('#/settings/assistant'))).toBe('/settings/assistant');
  });

  it('is sent with the turn', async () => {
    let body: unknown = null;
    const f = (async (_u: string, init: RequestInit) => {
      body = JSON.parse(String(init.body));
      return new Response('event: done\ndata: {"reply":{"conversationId":"c","text":"x","tools":[]}}\n\n', { headers: { 'Content-Type': 'text/event-stream' } });
    }) as unknown as typeof fetch;
    await streamTurn({ text: 'hi', path: '/tasks/tsk_1' }, () => {}, undefined, f);
    expect(body).toEqual({ text: 'hi', path: '/tasks/tsk_1' });
  });
});

describe('plans as providers', () => {
  const agent = (name: string, more: Partial<Agent> = {}): Agent => ({ name, title: name, installed: true, signedIn: 'yes', login: `${name} login`, ...more });

  it('offers a plan only when its agent is on this computer, and keeps a saved one', () => {
    const ids = (a: Agent[] | null, cur?: string) => providerOptions(a, cur).map((p) => p.id);
    expect(ids(null)).toEqual(['anthropic', 'openai', 'ollama']);
    expect(ids([agent('claude'), agent('codex', { installed: false })])).toEqual(['anthropic', 'openai', 'ollama', 'claude-code']);
    expect(ids([agent('codex')])).toEqual(['anthropic', 'openai', 'ollama', 'codex']);
    expect(ids([agent('opencode'), agent('claude')])).toEqual(['anthropic', 'openai', 'ollama', 'claude-code', 'opencode']);
    expect(providerOptions([], 'opencode').at(-1)).toEqual({ id: 'opencode', name: 'OpenCode — your plan (not found)', missing: true });
    expect(ids([agent('gemini'), agent('opencode')])).toEqual(['anthropic', 'openai', 'ollama', 'opencode', 'gemini-cli']);
    expect(providerOptions([agent('gemini')]).at(-1)).toEqual({ id: 'gemini-cli', name: 'Gemini CLI — your plan' });
    expect(providerOptions([], 'gemini-cli').at(-1)).toEqual({ id: 'gemini-cli', name: 'Gemini CLI — your plan (not found)', missing: true });
    const menu = providerOptions([], 'codex');
    expect(menu.at(-1)).toEqual({ id: 'codex', name: 'Codex — your plan (not found)', missing: true });
    expect(providerOptions([agent('claude')]).at(-1)?.name).toBe('Claude Code — your plan');
    expect(providerOptions(null, 'claude-code').at(-1)).toEqual({ id: 'claude-code', name: 'Claude Code — your plan' });
  });

  it('says whether the plan is signed in, with its login command when not', () => {
    expect(planStatus('claude-code', [agent('claude')])).toEqual({ state: 'yes', text: 'Signed in' });
    expect(planStatus('codex', [agent('codex', { signedIn: 'no', login: 'codex login' })])).toEqual({ state: 'no', text: 'Not signed in', login: 'codex login' });
    expect(planStatus('codex', [agent('codex', { signedIn: 'unknown' })]).state).toBe('unknown');
    expect(planStatus('claude-code', []).state).toBe('missing');
    expect(planStatus('opencode', [])).toEqual({ state: 'missing', text: 'OpenCode is not found on this computer.' });
    expect(planStatus('codex', []).text).toBe('Codex is not found on this computer.');
    expect(planStatus('opencode', [agent('opencode', { signedIn: 'no', login: 'opencode auth login' })])).toEqual({ state: 'no', text: 'Not signed in', login: 'opencode auth login' });
    expect(planStatus('gemini-cli', [])).toEqual({ state: 'missing', text: 'Gemini CLI is not found on this computer.' });
    expect(planStatus('gemini-cli', [agent('gemini', { signedIn: 'no', login: 'gemini' })])).toEqual({ state: 'no', text: 'Not signed in', login: 'gemini' });
    expect(planModels('claude-code', [agent('claude', { models: ['opus', { id: 'sonnet', efforts: ['low'] }, 'opus'] })])).toEqual(['opus', 'sonnet']);
  });

  it('has its own efforts, no key or base URL, and an optional model', () => {
    expect(effortsFor('claude-code').map((e) => e.id)).toEqual(['', 'low', 'medium', 'high', 'xhigh', 'max']);
    expect(effortsFor('codex').map((e) => e.id)).toEqual(['', 'minimal', 'low', 'medium', 'high', 'xhigh']);
    expect(effortsFor('codex')[0].name).toBe('Default');
    expect(effortsFor('opencode').map((e) => e.id)).toEqual(['', 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
    expect(effortsFor('opencode')[1].name).toBe('None');
    expect(planOf('opencode')?.defaultModel).toBe('OpenCode’s default');
    expect(effortsFor('anthropic')).toEqual(EFFORTS);
    expect(takesKey('claude-code')).toBe(false);
    expect(takesBaseUrl('codex')).toBe(false);
    expect(planOf('codex')?.defaultModel).toBe('Codex’s default');
    const s = normalizeSettings({ provider: 'claude-code', model: '', effort: 'max', baseUrl: 'http://x' });
    expect(s.provider).toBe('claude-code');
    expect(modelIsSet(s)).toBe(true);
    expect(modelIsSet(normalizeSettings({ provider: 'anthropic' }))).toBe(false);
    expect(validateSettings(s)).toEqual({ ok: true, value: { ...s, baseUrl: '' } });
    expect(validateSettings({ ...s, provider: 'codex' })).toMatchObject({ ok: false, field: 'effort' });
    expect(validateSettings({ ...s, effort: 'minimal', provider: 'codex', model: 'gpt-5.1-codex' }).ok).toBe(true);
    expect(validateSettings({ ...s, provider: 'opencode' }).ok).toBe(true);
    expect(validateSettings({ ...s, provider: 'opencode', effort: 'ultra' })).toMatchObject({ ok: false, field: 'effort' });
    expect(effortsFor('gemini-cli').map((e) => e.id)).toEqual(['']);
    expect(planOf('gemini-cli')?.defaultModel).toBe('Gemini CLI’s default');
    expect(validateSettings({ ...s, provider: 'gemini-cli', effort: '' }).ok).toBe(true);
    expect(validateSettings({ ...s, provider: 'gemini-cli', effort: 'high' })).toMatchObject({ ok: false, field: 'effort' });
  });

  it('picking a provider keeps what still fits', () => {
    const api = normalizeSettings({ provider: 'openai', model: 'gpt-5', baseUrl: 'http://h/v1', effort: 'high' });
    const cc = withProvider(api, 'claude-code');
    expect(cc).toMatchObject({ provider: 'claude-code', model: '', baseUrl: '', effort: 'high' });
    expect(withProvider({ ...cc, effort: 'max', model: 'opus' }, 'codex')).toMatchObject({ provider: 'codex', model: 'opus', effort: '' });
    expect(withProvider({ ...cc, model: 'opus' }, 'anthropic')).toMatchObject({ provider: 'anthropic', model: '', effort: 'high' });
    expect(withProvider(api, 'ollama')).toMatchObject({ model: 'gpt-5', baseUrl: 'http://h/v1' });
    expect(withProvider(api, 'openai')).toBe(api);
  });
});
