import { describe, expect, it } from 'vitest';
import { cannotContinue, cannotDelete, countsText, folderText, sessionStatusText } from './sessions';

describe('sessions', () => {
  it('says where a session works', () => {
    expect(folderText({ folder: '/data/workspace/job_1', folderKind: 'workspace' })).toBe('a fresh folder of its own');
    expect(folderText({ folder: '/home/me/src/app', folderKind: 'folder' })).toBe('/home/me/src/app');
    expect(folderText({ folder: '/w/t', folderKind: 'worktree' })).toBe('a worktree: /w/t');
    expect(folderText({ folder: '/data/workspace/projects/greenhouse', folderKind: 'project' })).toBe('projects/greenhouse');
  });

  it('counts in words', () => {
    expect(countsText({ runCount: 1, taskCount: 1 })).toBe('1 run · 1 task');
    expect(countsText({ runCount: 3, taskCount: 2 })).toBe('3 runs · 2 tasks');
  });

  it('names its state, deleted first', () => {
    expect(sessionStatusText({ status: 'waiting' })).toBe('Waiting for you');
    expect(sessionStatusText({ status: 'idle', deletedAt: '2025-01-01T00:00:00Z', deletedWhy: 'person' })).toBe('Deleted');
  });

  it('offers Continue and Delete only where the server would take them', () => {
    const idle = { status: 'idle' as const, resumable: true, lastRun: 'job_1' };
    expect(cannotContinue(idle)).toBe('');
    expect(cannotContinue({ ...idle, status: 'working' })).toMatch(/still going/);
    expect(cannotContinue({ ...idle, resumable: false })).toMatch(/never got far enough/);
    expect(cannotContinue({ ...idle, deletedAt: 'x' })).toMatch(/deleted/);
    expect(cannotDelete(idle)).toBe('');
    expect(cannotDelete({ status: 'queued' })).toMatch(/stop it/);
  });
});
