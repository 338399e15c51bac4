import { encodeFacts, FactChunkBuilder } from '../../src/analysis/facts';
import { putDay, type SiteFacts } from '../../queries/metrics/facts-cache';

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
