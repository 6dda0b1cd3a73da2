import { describe, expect, it } from 'vitest';
import {
  assignBodyFor,
  changedFields,
  defaultProfile,
  formFromProfile,
  profileInput,
  profileSummary,
  sortProfiles,
  type Profile,
} from './profiles';
import { assignBody, DEFAULT_FORM, type AssignForm } from './runs';

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
  it('keeps the long context window and fast mode', () => {
    const p = profile({ settings: { model: 'claude-sonnet-4-6', contextTier: 'long', fast: true } });
    const f = formFromProfile(p);
    expect([f.contextTier, f.fast]).toEqual(['long', true]);
    expect(profileInput('Long', f).settings).toMatchObject({ contextTier: 'long', fast: true });
    expect(profileSummary(p)).toBe('codex · claude-sonnet-4-6 · long context · fast');
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
  it('sends the standard window and fast mode off when the person turned them off', () => {
    const q = profile({ settings: { contextTier: 'long', fast: true } });
    const f: AssignForm = { ...formFromProfile(q), contextTier: '', fast: false };
    expect(assignBodyFor({ taskId: 't' }, f, q).settings).toEqual({ contextTier: '', fast: false });
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
