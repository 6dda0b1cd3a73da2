import { describe, expect, it } from 'vitest';
import { clampSize, closedSentence, inputMessage, resizeMessage, shouldReconnect, socketURL } from './terminal';

describe('terminal messages', () => {
  it('encodes input and resize as the runtime reads them', () => {
    expect(JSON.parse(inputMessage('echo hi\r'))).toEqual({ type: 'input', data: 'echo hi\r' });
    expect(JSON.parse(resizeMessage(120, 40))).toEqual({ type: 'resize', cols: 120, rows: 40 });
  });

  it('keeps sizes within the limits', () => {
    expect(clampSize(0, -3)).toEqual({ cols: 1, rows: 1 });
    expect(clampSize(99999, 99999)).toEqual({ cols: 1000, rows: 500 });
    expect(clampSize(80.7, Number.NaN)).toEqual({ cols: 80, rows: 1 });
  });

  it('builds the socket address on the page own host', () => {
    expect(socketURL({ protocol: 'http:', host: '127.0.0.1:4000' }, 'ts1', 80, 24)).toBe(
      'ws://127.0.0.1:4000/api/terminals/ts1/ws?cols=80&rows=24',
    );
    expect(socketURL({ protocol: 'https:', host: 'x.relay.example' }, 'a/b', 0, 0)).toBe(
      'wss://x.relay.example/api/terminals/a%2Fb/ws?cols=1&rows=1',
    );
  });

  it('says why it closed and whether to connect again', () => {
    expect(closedSentence(1000, 'The shell ended (exit code 0).')).toBe('The shell ended (exit code 0).');
    expect(closedSentence(1006, '')).toBe('The connection to Ensemble was lost.');
    expect(shouldReconnect(1006, '')).toBe(true);
    expect(shouldReconnect(1000, 'The shell ended (exit code 0).')).toBe(false);
    expect(shouldReconnect(1000, 'This window fell behind; connect again for the current screen.')).toBe(true);
    expect(shouldReconnect(1003, 'Unknown message type')).toBe(false);
  });
});
