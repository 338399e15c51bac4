import { encodeFacts, FactChunkBuilder, type FactDictionaries } from '../../src/analysis/facts';
import { putDay, type SiteFacts } from '../../queries/metrics/facts/layout';

const DAY_MS = 86_400_000;

/** An answer of a test's facts: its time in the day, what it was asked with, and per entity column its position and citation. */
export interface FactRow {
  t: number;
  prompt: string;
  location: string | null;
  schedule: string | null;
  model: string;
  /** per entity column: its position, 0 when not mentioned */
  pos: number[];
  cite: boolean[];
}

/** One day's answers stored in `site` in parts of at most `partSize` answers, as the answers projection stores them. */
export function putDayParts(site: SiteFacts, entities: string[], day: number, ofDay: FactRow[], partSize: number): void {
  for (let part = 0; part * partSize < ofDay.length; part++) {
    const b = new FactChunkBuilder(entities);
    for (const x of ofDay.slice(part * partSize, part * partSize + partSize))
      b.add({
        t: x.t,
        prompt_id: x.prompt,
        location_id: x.location,
        schedule_id: x.schedule,
        model: x.model,
        mentions: x.pos.flatMap((v, i) => (v ? [[i, v] as const] : [])),
        cited: x.cite.flatMap((v, i) => (v ? [i] : [])),
      });
    const { meta, data } = encodeFacts(b.build());
    putDay(site, new Date(day * DAY_MS).toISOString().slice(0, 10), part, meta, data);
  }
}

/**
 * A random answer drawn from the dictionaries `w` on the day `day()` draws: each entity mentioned with probability `mention` (positions 1, 2, …
 * in a random order) and cited with probability `cite`.
 */
export function randomFactRow(
  r: () => number,
  w: FactDictionaries,
  rates: { mention: number; cite: number },
  day: () => number,
): FactRow & { day: number } {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const mentioned = w.entities.map(() => r() < rates.mention);
  // positions: 1 + mentioned entities earlier in a random order
  const order = w.entities.map((_, i) => i).sort(() => r() - 0.5);
  const pos = w.entities.map(() => 0);
  let p = 0;
  for (const i of order) if (mentioned[i]) pos[i] = ++p;
  return {
    day: day(),
    t: Math.floor(r() * DAY_MS),
    prompt: pick(w.prompts),
    location: pick(w.locations),
    schedule: pick(w.schedules),
    model: pick(w.models),
    pos,
    cite: w.entities.map(() => r() < rates.cite),
  };
}
