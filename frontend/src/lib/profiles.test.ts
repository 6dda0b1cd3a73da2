import { describe, expect, it } from 'vitest';
import {
  agentModels,
  assignBodyFor,
  changedFields,
  defaultEffortLabel,
  defaultModelLabel,
  defaultProfile,
  formFromProfile,
  modelEfforts,
  profileInput,
  profileSummary,
  reconcile,
  sortProfiles,
  type Profile,
} from './profiles';
import { assignBody, DEFAULT_FORM, type AssignForm } from './runs';
import type { Agent } from './settings';

const profile = (p: Partial<Profile>): Profile => ({
  id: 'prof_1',
  name: 'Careful Codex',
  agent: 'codex',
  folder: '/home/me/app',
  settings: { mode: 'review', trusted: true, sandbox: false, git: 'commit', outside: 'none', internet: false, maxMinutes: 30, model: 'gpt-5', effort: 'high' },
  starred: false,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  ...p,
});

const agent = (a: Partial<Agent>): Agent => ({ name: 'codex', title: 'Codex', installed: true, signedIn: 'yes', ...a });

describe('profiles list', () => {
  it('puts the starred one first and finds the default', () => {
    const list = sortProfiles([profile({ id: 'a', name: 'Zed' }), profile({ id: 'b', name: 'Bee', starred: false }), profile({ id: 'c', name: 'Yak', starred: true })]);
    expect(list.map((p) => p.id)).toEqual(['c', 'b', 'a']);
    expect(defaultProfile(list)?.id).toBe('c');
    // Nothing starred: the first saved, as the runtime picks; none saved: Quick settings.
    expect(defaultProfile([profile({ id: 'new', createdAt: '2026-11-02T00:00:00Z' }), profile({ id: 'old', createdAt: '2026-11-01T00:00:00Z' })])?.id).toBe('old');
    expect(defaultProfile([])).toBeNull();
  });
  it('sums a profile up in a line', () => {
    expect(profileSummary(profile({}))).toBe('codex · Review after · gpt-5 (high) · 30 min');
    expect(profileSummary(profile({ agent: 'claude', settings: {} }))).toBe('claude');
  });
});

describe('form from a profile', () => {
  it('fills every field the profile names over the defaults', () => {
    const f = formFromProfile(profile({}));
    expect(f).toEqual({
      ...DEFAULT_FORM,
      agent: 'codex',
      folder: '/home/me/app',
      mode: 'review',
      trusted: true,
      sandbox: false,
      git: 'commit',
      outside: 'none',
      internet: false,
      maxMinutes: '30',
      maxTurns: '',
      model: 'gpt-5',
      effort: 'high',
    });
  });
  it('keeps the defaults for what the profile leaves out', () => {
    const f = formFromProfile(profile({ folder: undefined, settings: { mode: 'unattended' } }));
    expect(f).toEqual({ ...DEFAULT_FORM, agent: 'codex', mode: 'unattended' });
  });
  it('round-trips through the profile body', () => {
    const f = formFromProfile(profile({}));
    const input = profileInput('  Careful Codex ', f);
    expect(input).toEqual({ name: 'Careful Codex', agent: 'codex', folder: '/home/me/app', settings: profile({}).settings });
    expect(formFromProfile(profile({ ...input }))).toEqual(f);
  });
  it('leaves empty model, effort, limits and folder out of a profile', () => {
    const input = profileInput('Quick', { ...DEFAULT_FORM, maxMinutes: ' ', maxTurns: '0' });
    expect(input.folder).toBeUndefined();
    expect(input.settings).toEqual({ mode: 'ask', trusted: false, sandbox: true, outside: 'read', git: 'local', internet: true });
  });
});

describe('assign body with a profile', () => {
  const p = profile({});
  it('names only the profile when nothing changed', () => {
    expect(changedFields(formFromProfile(p), formFromProfile(p))).toEqual([]);
    expect(assignBodyFor({ taskId: 'task_1' }, formFromProfile(p), p)).toEqual({ taskId: 'task_1', profile: 'prof_1', settings: {} });
  });
  it('sends the fields the person changed, and only those', () => {
    const f: AssignForm = { ...formFromProfile(p), model: 'gpt-5-mini', maxTurns: '12', sandbox: true, folder: '/srv/other ' };
    expect(changedFields(formFromProfile(p), f)).toEqual(['folder', 'sandbox', 'maxTurns', 'model']);
    expect(assignBodyFor({ taskId: 'task_1' }, f, p)).toEqual({
      taskId: 'task_1',
      profile: 'prof_1',
      folder: '/srv/other',
      settings: { sandbox: true, maxTurns: 12, model: 'gpt-5-mini' },
    });
  });
  it('sends a changed agent', () => {
    const f = { ...formFromProfile(p), agent: 'claude', model: '', effort: '' };
    expect(assignBodyFor({ taskId: 't' }, f, p)).toEqual({ taskId: 't', profile: 'prof_1', agent: 'claude', settings: { model: '', effort: '' } });
  });
  it('sends a cleared limit as none', () => {
    const f = { ...formFromProfile(p), maxMinutes: '' };
    expect(assignBodyFor({ taskId: 't' }, f, p).settings).toEqual({ maxMinutes: 0 });
  });
  it('does not count typing the same value differently as a change', () => {
    const f = { ...formFromProfile(p), maxMinutes: 30, model: ' gpt-5 ' };
    expect(changedFields(formFromProfile(p), f)).toEqual([]);
  });
  it('asks for a worktree only with a folder', () => {
    expect(assignBodyFor({ taskId: 't' }, { ...formFromProfile(p), worktree: true }, p).worktree).toBe(true);
    const none = profile({ folder: undefined });
    expect(assignBodyFor({ taskId: 't' }, { ...formFromProfile(none), worktree: true }, none).worktree).toBeUndefined();
  });
  it('sends every field with quick settings', () => {
    const f = { ...DEFAULT_FORM, agent: 'claude', model: 'opus' };
    expect(assignBodyFor({ taskId: 't' }, f, null)).toEqual(assignBody({ taskId: 't' }, f));
    expect(assignBodyFor({ taskId: 't' }, f, null).profile).toBeUndefined();
  });
});

describe('models and efforts', () => {
  const agents = [
    agent({ name: 'claude', title: 'Claude Code', models: ['opus', 'sonnet', ' '] }),
    agent({ models: [{ id: 'gpt-5', efforts: ['low', 'medium', 'high'], defaultEffort: 'medium' }, { id: 'gpt-5-mini' }] }),
    agent({ name: 'gemini', title: 'Gemini CLI', models: null }),
  ];
  it('reads the models an agent reports, names or objects', () => {
    expect(agentModels(agents, 'claude')).toEqual([{ id: 'opus' }, { id: 'sonnet' }]);
    expect(agentModels(agents, 'codex').map((m) => m.id)).toEqual(['gpt-5', 'gpt-5-mini']);
    expect(agentModels(agents, 'gemini')).toEqual([]);
    expect(agentModels(null, 'claude')).toEqual([]);
    expect(agentModels(agents, 'nobody')).toEqual([]);
  });
  it('offers the efforts the model takes when known', () => {
    const m = agentModels(agents, 'codex');
    expect(modelEfforts(m, 'gpt-5')).toEqual(['low', 'medium', 'high']);
    expect(modelEfforts(m, 'gpt-5-mini')).toBeNull();
    expect(modelEfforts(m, '')).toBeNull();
    expect(defaultEffortLabel(m, 'gpt-5')).toBe('Default (Medium)');
    expect(defaultEffortLabel(m, 'gpt-5-mini')).toBe('Default');
    expect(defaultModelLabel(agents, 'claude')).toBe('Claude Code default');
    expect(defaultModelLabel(agents, 'stand-in')).toBe('stand-in default');
  });
  it('resets a model the new agent does not report, and an effort the model does not take', () => {
    const f: AssignForm = { ...DEFAULT_FORM, agent: 'claude', model: 'gpt-5', effort: 'max' };
    expect(reconcile(f, agents)).toEqual({ ...f, model: '', effort: 'max' });
    const g: AssignForm = { ...DEFAULT_FORM, agent: 'codex', model: 'gpt-5', effort: 'max' };
    expect(reconcile(g, agents)).toEqual({ ...g, effort: '' });
    const h: AssignForm = { ...DEFAULT_FORM, agent: 'codex', model: 'gpt-5', effort: 'high' };
    expect(reconcile(h, agents)).toBe(h);
  });
  it('keeps what was typed when the agent reports no models', () => {
    const f: AssignForm = { ...DEFAULT_FORM, agent: 'gemini', model: 'gemini-2.5-pro', effort: 'whatever' };
    expect(reconcile(f, agents)).toBe(f);
    expect(reconcile(f, null)).toBe(f);
  });
});
