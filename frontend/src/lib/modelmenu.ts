// The run settings' model menus (spec 003 §3.2): the models the chosen agent reports on this
// computer (its catalog, else its names), the chosen model's facts, and the choices it takes:
// thinking level, context window and fast mode. A choice the model does not take is reset.

import type { AssignForm } from './runs';
import type { Agent, ModelInfo } from './settings';

/** The levels offered when the model's own are not known (then the level is typed). */
export const COMMON_EFFORTS = ['low', 'medium', 'high', 'max'];

function find(agents: readonly Agent[] | null | undefined, agent: string): Agent | undefined {
  return agents?.find((x) => x.name === agent.trim());
}

/**
 * The models the named agent reports on this computer; [] when it reports none (then the model is
 * typed). A model from the agent's catalog always has its levels (none: []); one it only names has
 * none known.
 */
export function agentModels(agents: readonly Agent[] | null | undefined, agent: string): ModelInfo[] {
  const a = find(agents, agent);
  const described = !!a?.catalog?.length;
  const out: ModelInfo[] = [];
  const seen = new Set<string>();
  for (const m of described ? (a?.catalog ?? []) : (a?.models ?? [])) {
    const info = typeof m === 'string' ? { id: m } : m && typeof m.id === 'string' ? m : null;
    const id = info?.id.trim();
    if (!info || !id || seen.has(id)) continue;
    seen.add(id);
    out.push(described ? { ...info, id, efforts: info.efforts ?? [] } : { ...info, id });
  }
  return out;
}

/** The model a choice means: the one named, or for '' the agent's own default when it says which; null when not known. */
export function chosenModel(models: readonly ModelInfo[], model: string): ModelInfo | null {
  const id = model.trim();
  return models.find((m) => (id ? m.id === id : m.default === true)) ?? null;
}

/** The levels the chosen model takes; [] when it takes none; null when not known (then the level is typed). */
export function modelEfforts(models: readonly ModelInfo[], model: string): string[] | null {
  return chosenModel(models, model)?.efforts ?? null;
}

const LEVEL_LABEL: Record<string, string> = { xhigh: 'Extra high' };

/** A thinking level as a menu shows it: "high" → "High", "xhigh" → "Extra high". */
export function effortLabel(e: string): string {
  return LEVEL_LABEL[e] ?? (e ? e[0].toUpperCase() + e.slice(1) : e);
}

/** The default entry of the Thinking menu: "Default (Medium)" when the model names its own default. */
export function defaultEffortLabel(models: readonly ModelInfo[], model: string): string {
  const d = chosenModel(models, model)?.defaultEffort;
  return d ? `Default (${effortLabel(d)})` : 'Default';
}

/** The default entry of a model menu: "Claude Code default". */
export function defaultModelLabel(agents: readonly Agent[] | null | undefined, agent: string): string {
  return `${find(agents, agent)?.title || agent.trim() || 'Agent'} default`;
}

/** Whether the model has two context windows to choose between. */
export function hasLongContext(m: ModelInfo | null): boolean {
  return !!m?.longContext;
}

/** A token count as a window's size: 200000 → "200K", 1000000 → "1M". */
export function tokens(n: number): string {
  if (n >= 1_000_000) return `${+(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${Math.round(n / 1_000)}K`;
  return String(n);
}

/** The model's facts in a line, under the model menu: "Opus 4.8 · Anthropic · 1M context · fast mode". */
export function modelFacts(m: ModelInfo | null, isDefault: boolean): string {
  if (!m) return '';
  const parts: string[] = [];
  if (isDefault) parts.push(m.name || m.id);
  if (m.vendor) parts.push(m.vendor);
  if (m.context && m.longContext) parts.push(`${tokens(m.context)} or ${tokens(m.longContext)} context`);
  else if (m.context) parts.push(`${tokens(m.context)} context`);
  if (m.fast) parts.push('fast mode');
  if (m.description) parts.push(m.description);
  return parts.join(' · ');
}

/**
 * The form after its agent or model changed. A new agent starts from its own default model and
 * that model's own choices; otherwise a model the agent does not report goes back to the default,
 * and a level, long window or fast mode the chosen model does not take goes back to off or the
 * default. A model the agent does not describe keeps a typed level, but neither a long window
 * nor fast mode, which the dialog cannot offer for it.
 */
export function reconcile(f: AssignForm, agents: readonly Agent[] | null | undefined, previousAgent?: string): AssignForm {
  if (previousAgent !== undefined && previousAgent.trim() !== f.agent.trim()) {
    const reset = { ...f, model: '', effort: '', contextTier: '' as const, fast: false };
    return reset.model === f.model && reset.effort === f.effort && reset.contextTier === f.contextTier && reset.fast === f.fast ? f : reset;
  }
  if (!agents) return f; // not known yet: nothing to check against
  const models = agentModels(agents, f.agent);
  let { model, effort, contextTier, fast } = f;
  if (models.length && model.trim() && !models.some((m) => m.id === model.trim())) model = '';
  const m = chosenModel(models, model);
  const efforts = modelEfforts(models, model);
  if (efforts && effort.trim() && !efforts.includes(effort.trim())) effort = '';
  if (contextTier && !hasLongContext(m)) contextTier = '';
  if (fast && !m?.fast) fast = false;
  return model === f.model && effort === f.effort && contextTier === f.contextTier && fast === f.fast ? f : { ...f, model, effort, contextTier, fast };
}

/**
 * The models line of an agent in Settings → Agents: its models by name, the default marked, at most
 * `max` of them and how many more; "" when it reports none.
 */
export function modelsLine(agents: readonly Agent[] | null | undefined, agent: string, max = 6): string {
  const models = agentModels(agents, agent);
  if (!models.length) return '';
  const names = models.slice(0, max).map((m) => (m.name || m.id) + (m.default ? ' (default)' : ''));
  const more = models.length - max;
  return names.join(', ') + (more > 0 ? ` and ${more} more` : '');
}
