import { describe, expect, it } from 'vitest';
import {
  buildRoutine,
  cronWords,
  emptyForm,
  hookURL,
  runCause,
  runStatusWords,
  triggerWords,
  whenWords,
  type RoutineForm,
  type Trigger,
} from './routines';

describe('cronWords', () => {
  const cases: [string, string | null][] = [
    ['0 9 * * 1-5', 'Every weekday at 09:00'],
    ['30 7 * * *', 'Every day at 07:30'],
    ['0 9 * * mon-fri', 'Every weekday at 09:00'],
    ['0 18 * * 0,6', 'Every Saturday and Sunday at 18:00'],
    ['0 18 * * sat,sun', 'Every Saturday and Sunday at 18:00'],
    ['15 8 * * 1', 'Every Monday at 08:15'],
    ['0 8 * * 7', 'Every Sunday at 08:00'],
    ['0 8 * * 0,1,4', 'Every Monday, Thursday and Sunday at 08:00'],
    ['0 8 * * 1-7', 'Every day at 08:00'],
    ['0 0 1 * *', 'On the 1st of every month at 00:00'],
    ['0 12 22 * *', 'On the 22nd of every month at 12:00'],
    ['0 12 13 * *', 'On the 13th of every month at 12:00'],
    ['* * * * *', 'Every minute'],
    ['*/15 * * * *', 'Every 15 minutes'],
    ['0 * * * *', 'Every hour, on the hour'],
    ['5 * * * *', 'Every hour at 5 past'],
    ['0 */2 * * *', 'Every 2 hours'],
    ['30 */1 * * *', 'Every hour at 30 past'],
    ['  0   9 * *   1-5 ', 'Every weekday at 09:00'],
    // Shapes not put in words come back as null, and the caller shows the rule.
    ['0 9 * 1 *', null],
    ['0 9 1-7 * 1', null],
    ['0 9,17 * * *', null],
    ['0 9 * * 1-5/2', null],
    ['0 9 * * 5-1', null],
    ['0 24 * * *', null],
    ['0 9 * *', null],
    ['@daily', null],
  ];
  for (const [cron, want] of cases) it(cron, () => expect(cronWords(cron)).toBe(want));
});

describe('triggerWords', () => {
  const cases: [string, Trigger, string][] = [
    ['a weekday schedule with its zone', { kind: 'schedule', cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }, 'Every weekday at 09:00 (Europe/Paris)'],
    ['the computer’s zone is not named', { kind: 'schedule', cron: '0 9 * * *', timezone: 'Local' }, 'Every day at 09:00'],
    ['an odd rule as it is', { kind: 'schedule', cron: '0 9 1-7 * 1', timezone: 'UTC' }, '0 9 1-7 * 1 (UTC)'],
    ['tasks in one space', { kind: 'event', on: 'task', space: 'spc_work' }, 'When a task changes in spc_work'],
    ['pages anywhere', { kind: 'event', on: 'page' }, 'When a page changes in any space'],
    ['a webhook', { kind: 'webhook', windowSeconds: 10 }, 'When called by a webhook'],
    ['an unknown kind', { kind: 'lunar' }, 'lunar'],
  ];
  for (const [name, t, want] of cases) it(name, () => expect(triggerWords(t)).toBe(want));
});

describe('runStatusWords and runCause', () => {
  const words: [string, string][] = [
    ['gathering', 'Gathering changes'],
    ['waiting', 'Waiting to run'],
    ['started', 'Running'],
    ['done', 'Done'],
    ['failed', 'Failed'],
    ['missed', 'Missed'],
    ['skipped', 'Skipped'],
    ['odd', 'odd'],
  ];
  for (const [s, want] of words) it(s, () => expect(runStatusWords(s)).toBe(want));
  const causes: [string, string][] = [
    ['at:2026-12-02T09:00:00Z', 'Scheduled'],
    ['event:123', 'Changes'],
    ['hook:123', 'Webhook call'],
    ['manual:rrn_1', 'Run by you'],
    ['other', ''],
  ];
  for (const [k, want] of causes) it(k, () => expect(runCause(k)).toBe(want));
});

describe('whenWords', () => {
  const now = new Date('2026-12-02T20:00:00Z');
  const cases: [string, string][] = [
    ['2026-12-02T21:30:00Z', 'today at 21:30'],
    ['2026-12-03T09:00:00Z', 'tomorrow at 09:00'],
    ['2026-12-01T09:00:00Z', 'yesterday at 09:00'],
    ['2026-12-07T09:00:00Z', 'Mon 7 Dec at 09:00'],
    ['not a time', ''],
  ];
  for (const [iso, want] of cases) it(iso, () => expect(whenWords(iso, now, 'UTC')).toBe(want));
  it('counts days in the zone given', () => expect(whenWords('2026-12-02T23:30:00Z', now, 'Europe/Paris')).toBe('tomorrow at 00:30'));
});

describe('hookURL', () => {
  it('is under the origin, not the session path', () =>
    expect(hookURL('http://127.0.0.1:8080/', 'rtn_1')).toBe('http://127.0.0.1:8080/api/node/hooks/routines/rtn_1'));
});

describe('buildRoutine', () => {
  const form = (over: Partial<RoutineForm>): RoutineForm => ({ ...emptyForm('Europe/Paris'), instruction: 'Sum up my open tasks.', ...over });
  const ok: [string, Partial<RoutineForm>, unknown][] = [
    [
      'a schedule in its zone',
      { cron: ' 0  9 * * 1-5 ' },
      { nodeId: 'n1', instruction: 'Sum up my open tasks.', trigger: { kind: 'schedule', cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }, notify: 'always' },
    ],
    [
      'a schedule in the computer’s zone',
      { timezone: ' ', title: ' Morning ' },
      { nodeId: 'n1', title: 'Morning', instruction: 'Sum up my open tasks.', trigger: { kind: 'schedule', cron: '0 9 * * 1-5' }, notify: 'always' },
    ],
    [
      'an event in a space with a window',
      { kind: 'event', on: 'page', space: ' spc_1 ', window: '120', notify: 'needed' },
      { nodeId: 'n1', instruction: 'Sum up my open tasks.', trigger: { kind: 'event', on: 'page', space: 'spc_1', windowSeconds: 120 }, notify: 'needed' },
    ],
    [
      'a webhook takes nothing of the schedule',
      { kind: 'webhook', notify: 'never' },
      { nodeId: 'n1', instruction: 'Sum up my open tasks.', trigger: { kind: 'webhook' }, notify: 'never' },
    ],
  ];
  for (const [name, over, want] of ok) it(name, () => expect(buildRoutine('n1', form(over))).toEqual({ ok: true, routine: want }));

  const bad: [string, Partial<RoutineForm>, string, RegExp][] = [
    ['no instruction', { instruction: '   ' }, 'instruction', /what the routine does/],
    ['too long', { instruction: 'x'.repeat(6001) }, 'instruction', /at most 6000/],
    ['four cron fields', { cron: '0 9 * *' }, 'cron', /five fields.*this has 4/],
    ['six cron fields', { cron: '0 0 9 * * 1' }, 'cron', /this has 6/],
    ['an empty cron', { cron: '' }, 'cron', /this has 0/],
    ['a window of nothing', { kind: 'event', window: '0' }, 'window', /1 to 3600/],
    ['a window not a number', { kind: 'webhook', window: 'soon' }, 'window', /1 to 3600/],
  ];
  for (const [name, over, field, error] of bad) {
    it(name, () => {
      const b = buildRoutine('n1', form(over));
      expect(b.ok).toBe(false);
      if (!b.ok) {
        expect(b.field).toBe(field);
        expect(b.error).toMatch(error);
      }
    });
  }
});
