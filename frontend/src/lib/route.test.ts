import { describe, expect, it } from 'vitest';
import { parseRoute, routeHash, screenOf, type Route } from './route';

describe('routes', () => {
  it.each([
    ['', { name: 'board' }],
    ['#/', { name: 'board' }],
    ['#/nonsense', { name: 'board' }],
    ['#/task/', { name: 'board' }],
    ['#/task/tsk_1', { name: 'task', id: 'tsk_1' }],
    ['#task/tsk_1', { name: 'task', id: 'tsk_1' }],
    ['#/task/tsk_1/run/job_9', { name: 'task', id: 'tsk_1', run: 'job_9' }],
    ['#/nodes', { name: 'nodes' }],
    ['#/nodes/room_1', { name: 'nodes', id: 'room_1' }],
    ['#/task/a%20b', { name: 'task', id: 'a b' }],
    ['#/task/%E0%A4%A', { name: 'task', id: '%E0%A4%A' }],
    ['#/needs', { name: 'needs' }],
    ['#/settings', { name: 'settings' }],
    ['#/settings/assistant', { name: 'settings', section: 'assistant' }],
    ['#/projects', { name: 'projects' }],
    ['#/projects/prj_1', { name: 'projects', id: 'prj_1' }],
    ['#/projects/new', { name: 'projects', id: 'new' }],
    ['#/pages/pag_2', { name: 'pages', id: 'pag_2' }],
    ['#/people', { name: 'people' }],
    ['#/repos/rep_3', { name: 'repos', id: 'rep_3' }],
    ['#/sessions', { name: 'sessions' }],
    ['#/sessions/job_4', { name: 'sessions', id: 'job_4' }],
  ] as [string, Route][])('parseRoute(%j)', (hash, want) => expect(parseRoute(hash)).toEqual(want));

  it.each([
    { name: 'board' },
    { name: 'needs' },
    { name: 'settings' },
    { name: 'settings', section: 'assistant' },
    { name: 'task', id: 'tsk_1' },
    { name: 'task', id: 'a/b c', run: 'job_2' },
    { name: 'projects' },
    { name: 'people', id: 'per_1' },
    { name: 'pages', id: 'a/b' },
    { name: 'sessions', id: 'job_9' },
  ] as Route[])('round-trips %j', (r) => expect(parseRoute(routeHash(r))).toEqual(r));

  it('puts a task page under the board', () => {
    expect(screenOf({ name: 'task', id: 't' })).toBe('board');
    expect(screenOf({ name: 'repos', id: 'r' })).toBe('repos');
  });
});
