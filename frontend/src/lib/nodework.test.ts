import { describe, expect, it } from 'vitest';
import type { Message } from './node';
import { planCardOf, runCardOf, settingsLine, stepState } from './nodework';

const msg = (over: Partial<Message>): Message => ({
  id: 'm1',
  roomId: 'r1',
  seq: 1,
  author: 'node',
  kind: 'text',
  body: '',
  private: false,
  createdAt: '2026-01-01T00:00:00Z',
  ...over,
});

describe('runCardOf and planCardOf', () => {
  it('reads a run card with its job', () => {
    expect(runCardOf(msg({ kind: 'run', data: { jobId: 'j1' } }))?.jobId).toBe('j1');
  });
  it('refuses a run message without a job, and other kinds', () => {
    expect(runCardOf(msg({ kind: 'run', data: {} }))).toBeNull();
    expect(runCardOf(msg({ kind: 'text', data: { jobId: 'j1' } }))).toBeNull();
  });
  it('takes a plan card by missionId or id', () => {
    expect(planCardOf(msg({ kind: 'plan', data: { missionId: 'ms1' } }))?.missionId).toBe('ms1');
    expect(planCardOf(msg({ kind: 'plan', data: { id: 'ms2' } }))?.missionId).toBe('ms2');
    expect(planCardOf(msg({ kind: 'plan', data: 'x' }))).toBeNull();
  });
  it("reads the runtime's state and requirement ledger", () => {
    const c = planCardOf(msg({ kind: 'plan', data: { missionId: 'ms1', state: 'succeeded', requirements: { r1: 'accepted' } } }));
    expect(c?.status).toBe('succeeded');
    expect(c?.requirements).toEqual([{ id: 'r1', status: 'accepted' }]);
  });
});

describe('settingsLine', () => {
  const cases: { name: string; in: Parameters<typeof settingsLine>[0]; want: string }[] = [
    { name: 'nothing', in: undefined, want: '' },
    { name: 'resolved first', in: { requested: { agent: 'x' }, resolved: { agent: 'claude', model: 'opus', effort: 'high' } }, want: 'claude · opus · high effort' },
    { name: 'requested when nothing resolved', in: { requested: { model: 'sonnet', context: 'long' } }, want: 'sonnet · long context' },
    { name: 'observed model', in: { resolved: { agent: 'claude' }, observed: { model: 'opus-4' } }, want: 'claude; observed model opus-4' },
    { name: 'not reported is left out', in: { resolved: { agent: 'claude', effort: 'default' }, observed: { model: 'not_reported' } }, want: 'claude' },
  ];
  for (const c of cases) it(c.name, () => expect(settingsLine(c.in)).toBe(c.want));
});

describe('stepState', () => {
  const cases: { name: string; in: Parameters<typeof stepState>[0]; want: string }[] = [
    { name: 'outcome wins', in: { id: 's', status: 'done', outcome: 'pass' }, want: 'pass' },
    { name: 'unknown outcome shows the status', in: { id: 's', status: 'working', outcome: 'unknown' }, want: 'working' },
    { name: 'held', in: { id: 's', status: 'waiting', heldBy: ['b1'] }, want: 'held' },
    { name: 'empty holds are not held', in: { id: 's', status: 'waiting', heldBy: [] }, want: 'waiting' },
    { name: 'no status', in: { id: 's' }, want: 'waiting' },
  ];
  for (const c of cases) it(c.name, () => expect(stepState(c.in)).toBe(c.want));
});
