import { describe, expect, it } from 'vitest';
import {
  applyRunEvent,
  assignBody,
  codeSpans,
  countSteps,
  DEFAULT_FORM,
  emptyTrace,
  foldRows,
  formatCost,
  formatDuration,
  formatTokens,
  formatUsage,
  formFromJob,
  inputSummary,
  isEnded,
  prettyInput,
  reduceTrace,
  runModel,
  runSettingsLine,
  stepsLine,
  upsertJob,
  type Job,
  type Row,
} from './runs';
import type { LiveEvent } from './types';

let seq = 0;
const ev = (kind: string, data: Record<string, unknown>, s?: number): LiveEvent => ({
  kind,
  data: { runId: 'job_1', ...data },
  seq: s ?? ++seq,
});

describe('formatting', () => {
  it.each([
    [0, '0'],
    [950, '950'],
    [1000, '1k'],
    [1234, '1.23k'],
    [12_345, '12.3k'],
    [999_999, '1M'],
    [999_900, '999.9k'],
    [2_500_000, '2.5M'],
    [12_000_000, '12M'],
    [undefined, '0'],
  ])('formatTokens(%s) → %s', (n, want) => expect(formatTokens(n)).toBe(want));

  it.each([
    [0, ''],
    [undefined, ''],
    [0.004, '<$0.01'],
    [0.42, '$0.42'],
    [12.3, '$12.30'],
    [1204.4, '$1,204'],
  ])('formatCost(%s) → %j', (n, want) => expect(formatCost(n)).toBe(want));

  it.each([
    [850, '0.9 s'],
    [12_000, '12 s'],
    [60_000, '1 min'],
    [125_000, '2 min 5 s'],
    [3_600_000, '1 h'],
    [3_720_000, '1 h 2 min'],
    [-5, '0.0 s'],
  ])('formatDuration(%s) → %s', (n, want) => expect(formatDuration(n)).toBe(want));

  it('formatUsage adds every token and the cost', () => {
    expect(formatUsage({ inputTokens: 1000, outputTokens: 200, cacheRead: 10_000, costUsd: 0.42 })).toBe('11.2k tokens · $0.42');
    expect(formatUsage({ inputTokens: 0, outputTokens: 0 })).toBe('');
    expect(formatUsage(null)).toBe('');
  });

  it.each([
    ['{"command":"touch made.txt"}', 'touch made.txt'],
    ['{"file_path":"/a/b.go","content":"x"}', '/a/b.go'],
    ['{"x":1}', '{"x":1}'],
    ['plain   text\nhere', 'plain text here'],
    ['', ''],
  ])('inputSummary(%j) → %j', (input, want) => expect(inputSummary(input)).toBe(want));

  it('inputSummary cuts long input', () => {
    expect(inputSummary('x'.repeat(300), 20)).toHaveLength(20);
  });

  it('prettyInput indents JSON and leaves other text', () => {
    expect(prettyInput('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyInput('not json')).toBe('not json');
  });

  it.each([
    ['In Ask mode: `touch x`.', [{ code: false, text: 'In Ask mode: ' }, { code: true, text: 'touch x' }, { code: false, text: '.' }]],
    ['no code', [{ code: false, text: 'no code' }]],
    ['one ` tick', [{ code: false, text: 'one ` tick' }]],
  ])('codeSpans(%j)', (text, want) => expect(codeSpans(text)).toEqual(want));

  it.each([
    ['queued', false],
    ['running', false],
    ['paused', false],
    ['done', true],
    ['failed', true],
    ['interrupted', true],
  ])('isEnded(%s) → %s', (s, want) => expect(isEnded(s)).toBe(want));
});

describe('what a run runs with', () => {
  const asked = { mode: 'ask', model: 'opus', effort: 'high' } as Job['settings'];
  const run = (j: Partial<Job>) => ({ status: 'running', settings: asked, ...j }) as Job;

  it.each([
    ['the reported model', run({ observed: { model: 'claude-opus-4-8' } }), 'claude-opus-4-8'],
    ["the started event's model, from an older runtime", run({ model: 'gpt-5.5' }), 'gpt-5.5'],
    ['nothing reported: the model asked for, marked', run({}), 'opus (asked)'],
    ['nothing asked or reported', run({ settings: { ...asked, model: '' } }), 'default model (asked)'],
  ])('runModel: %s', (_, j, want) => expect(runModel(j)).toBe(want));

  it.each([
    ['all reported', run({ observed: { model: 'gpt-5.5', effort: 'high', contextTokens: 258_400 } }), 'gpt-5.5 · thinking high · 258.4k context'],
    [
      'Claude Code: no thinking level',
      run({ observed: { model: 'claude-opus-4-8[1m]', contextTokens: 1_000_000 } }),
      'claude-opus-4-8[1m] · thinking not reported · 1M context',
    ],
    ['nothing reported', run({ observed: {} }), 'opus (asked) · thinking not reported · context not reported'],
    ['no observed at all', run({}), 'opus (asked) · thinking not reported · context not reported'],
    ['queued: only what was asked', run({ status: 'queued' }), 'opus (asked)'],
  ])('runSettingsLine: %s', (_, j, want) => expect(runSettingsLine(j)).toBe(want));
});

describe('applyRunEvent', () => {
  it('turns a whole run into rows', () => {
    const st = reduceTrace([
      ev('run.created', { status: 'queued', agent: 'claude', text: 'Assigned to claude (mode ask).' }),
      ev('run.status', { status: 'running' }),
      ev('run.started', { model: 'opus', session: 's1', attempt: 1 }),
      ev('run.thinking', { text: 'hmm' }),
      ev('run.message', { text: 'I will make the file.' }),
      ev('run.decision', { tool: 'Bash', toolId: 't1', input: '{"command":"touch made.txt"}', decision: 'ask', reason: 'Ask mode.' }),
      ev('run.decision', { tool: 'Bash', toolId: 't1', decision: 'allow', reason: 'Allowed once.' }),
      ev('run.tool_start', { step: 1, tool: 'Bash', toolId: 't1', input: '{"command":"touch made.txt"}' }),
      ev('run.usage', { usage: { inputTokens: 10, outputTokens: 5 } }),
      ev('run.tool_end', { step: 1, tool: 'Bash', toolId: 't1', output: 'ok', durationMs: 40 }),
      ev('run.status', { status: 'done' }),
      ev('run.ended', { status: 'done', summary: 'Made it.' }),
    ]);
    expect(st.rows.map((r) => [r.type, r.kind])).toEqual([
      ['note', 'run.created'],
      ['note', 'run.started'],
      ['thinking', 'run.thinking'],
      ['message', 'run.message'],
      ['decision', 'run.decision'],
      ['decision', 'run.decision'],
      ['tool', 'run.tool_end'],
      ['ended', 'run.ended'],
    ]);
    expect(st.status).toBe('done');
    expect(st.model).toBe('opus');
    expect(st.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
    expect(st.waiting).toBe(false);
    expect(st.open).toEqual({});
    const tool = st.rows[6];
    expect(tool).toMatchObject({ tool: 'Bash', input: '{"command":"touch made.txt"}', output: 'ok', done: true, failed: false, durationMs: 40 });
    expect(st.rows[4].text).toBe('Asked you: touch made.txt');
    expect(st.rows[5].text).toBe('You allowed it once');
    expect(st.rows[7].output).toBe('Made it.');
  });

  it('an ask waits until it is answered', () => {
    let st = applyRunEvent(emptyTrace(), ev('run.decision', { decision: 'ask', input: 'rm -rf x' }));
    expect(st.waiting).toBe(true);
    st = applyRunEvent(st, ev('run.decision', { decision: 'deny', reason: 'Refused: the person said no.' }));
    expect(st.waiting).toBe(false);
    expect(st.rows[1]).toMatchObject({ text: 'You refused it', detail: 'Refused: the person said no.', decision: 'deny' });
  });

  it('a refusal says what and why', () => {
    const st = applyRunEvent(emptyTrace(), ev('run.decision', { decision: 'refuse', input: '{"command":"git push"}', reason: 'Git is local only.' }));
    expect(st.rows[0]).toMatchObject({ text: 'Refused: git push', detail: 'Git is local only.' });
  });

  it('questions: asked, answered, taken by Run unattended', () => {
    const st = reduceTrace([
      ev('run.question', { text: 'Which colour?', decision: 'ask' }),
      ev('run.question', { text: 'Which colour?', decision: 'answered', reason: 'Blue' }),
      ev('run.question', { text: 'Size?', decision: 'recommended', reason: 'Run unattended took the recommended answer: M' }),
    ]);
    expect(st.rows.map((r) => r.text)).toEqual(['Which colour?', 'You answered: Blue', 'Run unattended took the recommended answer: M']);
    expect(st.waiting).toBe(false);
  });

  it('skips events it has already seen (a replay after a reconnect)', () => {
    const a = ev('run.message', { text: 'one' }, 10);
    const b = ev('run.message', { text: 'two' }, 11);
    const st = reduceTrace([a, b, a, b]);
    expect(st.rows.map((r) => r.text)).toEqual(['one', 'two']);
    expect(st.seq).toBe(11);
  });

  it('never changes its input and ignores unknown kinds and bad data', () => {
    const st = reduceTrace([ev('run.message', { text: 'x' })]);
    const copy = structuredClone(st);
    applyRunEvent(st, ev('run.message', { text: 'y' }));
    expect(st).toEqual(copy);
    expect(applyRunEvent(st, ev('run.output', { text: 'z' }))).toBe(st);
    expect(applyRunEvent(st, { kind: 'run.message', data: 'oops', seq: 999 })).toBe(st);
  });

  it('a tool end without its start still shows', () => {
    const st = applyRunEvent(emptyTrace(), ev('run.tool_end', { step: 3, tool: 'Read', failed: true, output: 'no such file' }));
    expect(st.rows[0]).toMatchObject({ type: 'tool', done: true, failed: true });
  });

  it('matches starts and ends by step when there is no tool id', () => {
    const st = reduceTrace([
      ev('run.tool_start', { step: 1, tool: 'A' }),
      ev('run.tool_start', { step: 2, tool: 'B' }),
      ev('run.tool_end', { step: 1, tool: 'A', output: 'a' }),
    ]);
    expect(st.rows.map((r) => [r.tool, r.done])).toEqual([
      ['A', true],
      ['B', false],
    ]);
    expect(countSteps(st.rows)).toEqual({ steps: 2, failed: 0, running: 1 });
  });

  it('calls still open when the run ends are marked failed', () => {
    const st = reduceTrace([ev('run.tool_start', { step: 1, tool: 'Bash', toolId: 'x' }), ev('run.ended', { status: 'stopped' })]);
    expect(st.rows[0]).toMatchObject({ done: true, failed: true });
    expect(st.rows[1]).toMatchObject({ type: 'ended', text: 'Stopped' });
  });

  it('status rows: a plain start and an end leave none; a pause does', () => {
    const st = reduceTrace([
      ev('run.created', { status: 'queued' }),
      ev('run.status', { status: 'running' }),
      ev('run.status', { status: 'paused', reason: 'You paused it.' }),
      ev('run.status', { status: 'failed' }),
    ]);
    expect(st.rows.map((r) => r.text)).toEqual(['Assigned to an agent.', 'Paused']);
    expect(st.status).toBe('failed');
  });

  it('retry, session gone, error, evidence, report and note rows', () => {
    const st = reduceTrace([
      ev('run.retry', { attempt: 2, retryInMs: 15_000, text: 'boom' }),
      ev('run.session_gone', { session: 's1' }),
      ev('run.error', { text: 'bad' }),
      ev('run.evidence', { input: 'shot.png', text: 'the page', reason: 'evd_1 (screenshot)' }),
      ev('run.report', { text: 'All good', status: 'pass' }),
      ev('run.note', { text: 'Haiku 4.5 has no fast mode; the run goes without it.' }),
    ]);
    expect(st.rows.map((r) => [r.type, r.text])).toEqual([
      ['note', 'Carrying on in 15 s (try 2).'],
      ['note', 'The agent session could not be reopened; a new one starts with the full brief.'],
      ['error', 'bad'],
      ['evidence', 'shot.png'],
      ['report', 'All good'],
      ['note', 'Haiku 4.5 has no fast mode; the run goes without it.'],
    ]);
    expect(st.rows[3].detail).toBe('the page · evd_1 (screenshot)');
  });
});

describe('steps', () => {
  const tool = (k: string, done = true, failed = false): Row => ({ key: k, kind: 'run.tool_end', type: 'tool', text: 'T', done, failed });
  const msg = (k: string): Row => ({ key: k, kind: 'run.message', type: 'message', text: 'm' });

  it('stepsLine', () => {
    expect(stepsLine({ steps: 0, failed: 0, running: 0 })).toBe('');
    expect(stepsLine({ steps: 1, failed: 0, running: 0 })).toBe('1 step');
    expect(stepsLine({ steps: 8, failed: 1, running: 1 })).toBe('8 steps · 1 failed · 1 running');
  });

  it('does not fold four calls or fewer', () => {
    const rows = [tool('a'), tool('b'), tool('c'), tool('d')];
    expect(foldRows(rows).every((i) => i.type === 'row')).toBe(true);
  });

  it('folds runs of three or more finished calls once there are more than four', () => {
    const rows = [tool('a'), tool('b'), tool('c'), msg('m'), tool('d'), tool('e'), tool('f', true, true), tool('g'), tool('h', false)];
    const items = foldRows(rows);
    expect(items.map((i) => (i.type === 'fold' ? `fold:${i.rows.length}` : i.row.key))).toEqual([
      'fold:3',
      'm',
      'd',
      'e',
      'f',
      'g',
      'h',
    ]);
  });
});

describe('assigning', () => {
  it('sends the form as the API takes it', () => {
    const body = assignBody(
      { taskId: 'tsk_1' },
      { ...DEFAULT_FORM, agent: ' stand-in ', folder: ' /tmp/x ', maxMinutes: 30, maxTurns: '', model: 'opus', effort: ' ' },
    );
    expect(body).toEqual({
      taskId: 'tsk_1',
      agent: 'stand-in',
      folder: '/tmp/x',
      settings: { mode: 'ask', trusted: false, sandbox: true, internet: true, git: 'local', outside: 'read', maxMinutes: 30, model: 'opus' },
    });
  });

  it('sends the long context window and fast mode when chosen', () => {
    const body = assignBody({ taskId: 't' }, { ...DEFAULT_FORM, model: 'claude-sonnet-4-6', contextTier: 'long', fast: true });
    expect(body.settings).toMatchObject({ model: 'claude-sonnet-4-6', contextTier: 'long', fast: true });
  });

  it('a continuation names the run and the new title; a worktree is asked for', () => {
    const body = assignBody({ title: 'Now the tests', continue: 'job_1' }, { ...DEFAULT_FORM, folder: '/r', worktree: true, maxTurns: null });
    expect(body).toMatchObject({ title: 'Now the tests', continue: 'job_1', folder: '/r', worktree: true });
    expect(body.settings).not.toHaveProperty('maxTurns');
  });

  it('formFromJob takes an earlier run back', () => {
    const j = {
      id: 'job_1',
      agent: 'codex',
      folderKind: 'worktree',
      folder: '/repo',
      settings: { mode: 'review', trusted: true, sandbox: false, internet: false, git: 'commit', outside: 'none', maxMinutes: 10, maxTurns: 0, model: 'm', effort: 'high' },
    } as unknown as Job;
    expect(formFromJob(j)).toEqual({
      agent: 'codex',
      folder: '/repo',
      worktree: true,
      mode: 'review',
      trusted: true,
      sandbox: false,
      internet: false,
      git: 'commit',
      outside: 'none',
      maxMinutes: '10',
      maxTurns: '',
      model: 'm',
      effort: 'high',
      contextTier: '',
      fast: false,
    });
    expect(formFromJob({ ...j, folderKind: 'workspace', folder: '/data/ws' } as Job).folder).toBe('');
    const long = formFromJob({ ...j, settings: { ...j.settings, contextTier: 'long', fast: true } } as Job);
    expect([long.contextTier, long.fast]).toEqual(['long', true]);
  });

  it('upsertJob keeps the newest first and replaces by id', () => {
    const a = { id: 'a', createdAt: '2025-01-01T00:00:00Z', status: 'done' } as Job;
    const b = { id: 'b', createdAt: '2025-01-02T00:00:00Z', status: 'running' } as Job;
    const list = upsertJob(upsertJob([], a), b);
    expect(list.map((j) => j.id)).toEqual(['b', 'a']);
    expect(upsertJob(list, { ...a, status: 'failed' }).find((j) => j.id === 'a')?.status).toBe('failed');
  });
});

describe('run cards in words', () => {
  it('names the settings as sentences, never as field names', async () => {
    const { settingsSentence } = await import('./runs');
    expect(
      settingsSentence({ mode: 'ask', internet: true, sandbox: true, outside: 'read', git: 'local', trusted: false, maxMinutes: 0, maxTurns: 0, model: '', effort: '' }),
    ).toBe('Ask mode; internet on, sandboxed; may read outside its folder; no commits');
    expect(settingsSentence({ mode: 'unattended', internet: false, sandbox: false, outside: 'none', git: 'commit', askBeforeCommit: true, trusted: true })).toBe(
      'Run unattended; internet off, no sandbox; stays in its folder; may commit, not push; asks before each commit; trusted folder',
    );
    expect(settingsSentence(null)).toBe('');
  });

  it("finds each task's newest run", async () => {
    const { latestByTask, cardRunText } = await import('./runs');
    const got = latestByTask([
      { id: 'job_1', taskId: 't1', createdAt: '2025-01-01T10:00:00Z' },
      { id: 'job_3', taskId: 't1', createdAt: '2025-01-02T10:00:00Z' },
      { id: 'job_2', taskId: 't2', createdAt: '2025-01-01T11:00:00Z' },
    ]);
    expect(Object.fromEntries(got)).toEqual({ t1: 'job_3', t2: 'job_2' });
    expect(cardRunText({ agent: 'claude', status: 'running' })).toBe('claude · Running');
  });
});
