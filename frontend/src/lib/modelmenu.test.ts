import { describe, expect, it } from 'vitest';
import {
  modelsLine,
  agentModels,
  chosenModel,
  defaultEffortLabel,
  defaultModelLabel,
  effortLabel,
  hasLongContext,
  modelEfforts,
  modelFacts,
  reconcile,
  tokens,
} from './modelmenu';
import { DEFAULT_FORM, type AssignForm } from './runs';
import type { Agent, ModelInfo } from './settings';

const agent = (a: Partial<Agent>): Agent => ({ name: 'codex', title: 'Codex', installed: true, signedIn: 'yes', ...a });

// As detection serves them: Claude Code from Ensemble's table, Codex from model/list, Gemini names only.
const opus: ModelInfo = { id: 'claude-opus-4-8', name: 'Opus 4.8', vendor: 'Anthropic', default: true, efforts: ['low', 'medium', 'high', 'xhigh', 'max'], defaultEffort: 'high', context: 1_000_000, fast: true };
const sonnet46: ModelInfo = { id: 'claude-sonnet-4-6', name: 'Sonnet 4.6', vendor: 'Anthropic', efforts: ['low', 'medium', 'high', 'max'], defaultEffort: 'high', context: 200_000, longContext: 1_000_000 };
const haiku: ModelInfo = { id: 'claude-haiku-4-5', name: 'Haiku 4.5', vendor: 'Anthropic', context: 200_000 };
const agents = [
  agent({ name: 'claude', title: 'Claude Code', models: [opus.id, sonnet46.id, haiku.id], catalog: [opus, sonnet46, haiku] }),
  agent({ models: [{ id: 'gpt-5', efforts: ['low', 'medium', 'high'], defaultEffort: 'medium' }, { id: 'gpt-5-mini' }] }),
  agent({ name: 'gemini', title: 'Gemini CLI', models: ['gemini-2.5-pro', ' ', 'gemini-2.5-pro'] }),
  agent({ name: 'cursor', title: 'Cursor', models: null }),
];
const form = (f: Partial<AssignForm>): AssignForm => ({ ...DEFAULT_FORM, ...f });

describe('the models an agent reports', () => {
  it('reads its catalog, else its names', () => {
    expect(agentModels(agents, 'claude').map((m) => m.id)).toEqual([opus.id, sonnet46.id, haiku.id]);
    expect(agentModels(agents, 'gemini')).toEqual([{ id: 'gemini-2.5-pro' }]);
    expect(agentModels(agents, 'codex').map((m) => m.id)).toEqual(['gpt-5', 'gpt-5-mini']);
    expect(agentModels(agents, 'cursor')).toEqual([]);
    expect(agentModels(null, 'claude')).toEqual([]);
    expect(agentModels(agents, 'nobody')).toEqual([]);
  });
  it('knows the default model when the agent names it', () => {
    const m = agentModels(agents, 'claude');
    expect(chosenModel(m, '')?.id).toBe(opus.id);
    expect(chosenModel(m, ' claude-haiku-4-5 ')?.id).toBe(haiku.id);
    expect(chosenModel(agentModels(agents, 'codex'), '')).toBeNull();
  });
  it('labels the menus', () => {
    expect(defaultModelLabel(agents, 'claude')).toBe('Claude Code default');
    expect(defaultModelLabel(agents, 'stand-in')).toBe('stand-in default');
    expect(effortLabel('xhigh')).toBe('Extra high');
    expect(effortLabel('medium')).toBe('Medium');
  });
});

describe('thinking levels', () => {
  const claude = agentModels(agents, 'claude');
  const codex = agentModels(agents, 'codex');
  for (const [name, models, model, want, label] of [
    ['a described model', claude, sonnet46.id, sonnet46.efforts, 'Default (High)'],
    ['the default model', claude, '', opus.efforts, 'Default (High)'],
    ['a described model without levels', claude, haiku.id, [], 'Default'],
    ['a named model with levels', codex, 'gpt-5', ['low', 'medium', 'high'], 'Default (Medium)'],
    ['a named model without them', codex, 'gpt-5-mini', null, 'Default'],
    ['a default not named', codex, '', null, 'Default'],
  ] as const) {
    it(name, () => {
      expect(modelEfforts(models, model)).toEqual(want);
      expect(defaultEffortLabel(models, model)).toBe(label);
    });
  }
});

describe('facts, context window and fast mode', () => {
  it('says what the model is', () => {
    expect(modelFacts(opus, true)).toBe('Opus 4.8 · Anthropic · 1M context · fast mode');
    expect(modelFacts(sonnet46, false)).toBe('Anthropic · 200K or 1M context');
    expect(modelFacts({ id: 'gpt-6', vendor: 'OpenAI', description: 'For coding.' }, false)).toBe('OpenAI · For coding.');
    expect(modelFacts(null, true)).toBe('');
  });
  it('offers the window only with two', () => {
    expect(hasLongContext(sonnet46)).toBe(true);
    expect(hasLongContext(opus)).toBe(false);
    expect(hasLongContext(null)).toBe(false);
  });
  it('writes window sizes short', () => {
    expect([tokens(200_000), tokens(1_000_000), tokens(258_400), tokens(1_500_000), tokens(900)]).toEqual(['200K', '1M', '258K', '1.5M', '900']);
  });
});

describe('reconcile', () => {
  it('resets what the new model does not take', () => {
    const f = form({ agent: 'claude', model: sonnet46.id, effort: 'max', contextTier: 'long', fast: false });
    expect(reconcile(f, agents)).toBe(f);
    expect(reconcile({ ...f, model: opus.id }, agents)).toEqual({ ...f, model: opus.id, contextTier: '' });
    expect(reconcile({ ...f, model: haiku.id }, agents)).toEqual({ ...f, model: haiku.id, effort: '', contextTier: '' });
    const fast = form({ agent: 'claude', model: opus.id, effort: 'xhigh', fast: true });
    expect(reconcile(fast, agents)).toBe(fast);
    expect(reconcile({ ...fast, model: sonnet46.id }, agents)).toEqual({ ...fast, model: sonnet46.id, effort: '', fast: false });
    expect(reconcile({ ...fast, model: '' }, agents)).toEqual({ ...fast, model: '' });
  });
  it('resets a model the agent does not report', () => {
    const g = form({ agent: 'codex', model: 'opus', effort: 'high' });
    expect(reconcile(g, agents)).toEqual({ ...g, model: '', effort: 'high' });
    const h = form({ agent: 'codex', model: 'gpt-5', effort: 'max' });
    expect(reconcile(h, agents)).toEqual({ ...h, effort: '' });
  });
  it('starts a new agent from its own defaults', () => {
    const f = form({ agent: 'codex', model: opus.id, effort: 'high', contextTier: 'long', fast: true });
    expect(reconcile(f, agents, 'claude')).toEqual({ ...f, model: '', effort: '', contextTier: '', fast: false });
    const plain = form({ agent: 'codex' });
    expect(reconcile(plain, agents, 'claude')).toBe(plain);
    expect(reconcile(f, agents, ' codex ')).toEqual({ ...f, model: '', contextTier: '', fast: false });
  });
  it('keeps a typed level, but no window or fast mode, for a model not described', () => {
    const f = form({ agent: 'gemini', model: 'gemini-2.5-pro', effort: 'whatever', contextTier: 'long', fast: true });
    expect(reconcile(f, agents)).toEqual({ ...f, contextTier: '', fast: false });
    const typed = form({ agent: 'cursor', model: 'anything', effort: 'high' });
    expect(reconcile(typed, agents)).toBe(typed);
  });
  it('checks nothing before the agents are known', () => {
    const f = form({ agent: 'claude', model: 'x', fast: true });
    expect(reconcile(f, null)).toBe(f);
  });
});

describe('modelsLine', () => {
  it('names the models, marks the default and counts the rest', () => {
    const agents = [
      {
        name: 'claude',
        title: 'Claude Code',
        installed: true,
        signedIn: 'yes' as const,
        catalog: [
          { id: 'opus', name: 'Opus', default: true },
          { id: 'sonnet', name: 'Sonnet' },
          { id: 'haiku' },
        ],
      },
      { name: 'codex', title: 'Codex', installed: true, signedIn: 'yes' as const, models: ['gpt-5.5', 'gpt-5.5', 'o3'] },
      { name: 'gemini', title: 'Gemini CLI', installed: true, signedIn: 'yes' as const },
    ];
    expect(modelsLine(agents, 'claude')).toBe('Opus (default), Sonnet, haiku');
    expect(modelsLine(agents, 'claude', 2)).toBe('Opus (default), Sonnet and 1 more');
    expect(modelsLine(agents, 'codex')).toBe('gpt-5.5, o3');
    expect(modelsLine(agents, 'gemini')).toBe('');
  });
});
