import { describe, expect, it } from 'vitest';
import { PLAN_EFFORTS, PLANS } from './assistant';
import { PROJECT_STATUSES } from './records';
import { isEnded, RUN_STATUS_LABEL } from './runs';
import { PRIORITIES, STATUSES } from './states';

// The lists come from the runtime (catalog.gen.ts); the words stay here.
describe('catalogs from the runtime', () => {
  it('says which runs are over', () => {
    for (const s of ['queued', 'running', 'paused']) expect(isEnded(s)).toBe(false);
    for (const s of ['done', 'failed', 'stopped', 'stuck', 'limit', 'interrupted', 'something new']) expect(isEnded(s)).toBe(true);
    expect(Object.keys(RUN_STATUS_LABEL)).toHaveLength(9);
  });

  it('lists the board and the records in their order, with their words', () => {
    expect(STATUSES).toEqual(['proposed', 'todo', 'in_progress', 'waiting_approval', 'blocked', 'done', 'dropped']);
    expect(PRIORITIES).toEqual(['none', 'low', 'medium', 'high', 'urgent']);
    expect(PROJECT_STATUSES).toEqual([
      ['active', 'Active'],
      ['paused', 'Paused'],
      ['done', 'Done'],
      ['archived', 'Archived'],
    ]);
  });

  it('names the plans as before', () => {
    expect(PLANS).toEqual([
      { id: 'claude-code', agent: 'claude', title: 'Claude Code', name: 'Claude Code — your plan', defaultModel: 'Claude Code’s default' },
      { id: 'codex', agent: 'codex', title: 'Codex', name: 'Codex — your plan', defaultModel: 'Codex’s default' },
      { id: 'opencode', agent: 'opencode', title: 'OpenCode', name: 'OpenCode — your plan', defaultModel: 'OpenCode’s default' },
      { id: 'gemini-cli', agent: 'gemini', title: 'Gemini CLI', name: 'Gemini CLI — your plan', defaultModel: 'Gemini CLI’s default' },
    ]);
    expect(PLAN_EFFORTS['claude-code']).toEqual(['low', 'medium', 'high', 'xhigh', 'max']);
    expect(PLAN_EFFORTS['gemini-cli']).toEqual([]);
  });
});
