/**
 * The answers dataset of CONTRACT.md's benchmarks: one website, 10 competitors, 100 prompts, 11 models, 3
 * locations, one answer per prompt x model x location per day for 365 days (about 1.2 M answers), the answer texts,
 * citations and product cards written by the simulated engine, deterministic from a seed. `--quick` keeps 20
 * prompts and 30 days.
 */
import { MODEL_IDS } from '../src/domain/models';
import { createSimulatedEngine } from '../src/engines/simulated';
import type { EngineWebsite } from '../src/engines/port';

export interface DatasetShape {
  prompts: number;
  days: number;
  locations: number;
  competitors: number;
  /** first day, YYYY-MM-DD */
  firstDay: string;
  seed: number;
}

export const fullShape: DatasetShape = { prompts: 100, days: 365, locations: 3, competitors: 10, firstDay: '2025-01-01', seed: 7 };
export const quickShape: DatasetShape = { ...fullShape, prompts: 20, days: 30 };

export const answersIn = (s: DatasetShape) => s.prompts * s.days * s.locations * MODEL_IDS.length;

const BRANDS = ['Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne', 'Soylent', 'Vandelay', 'Oscorp'];
const SUBJECTS = ['project management software', 'CRM for startups', 'password manager', 'email marketing tool', 'accounting software'];
const FRAMES = ['best {} for small teams', 'is {} worth it', 'cheapest {} with good support', '{} alternatives', 'which {} do experts recommend'];
const CITIES = [
  { location: 'New York, United States', country: 'United States', city: 'New York' },
  { location: 'London, United Kingdom', country: 'United Kingdom', city: 'London' },
  { location: 'Berlin, Germany', country: 'Germany', city: 'Berlin' },
];

export interface SiteSpec {
  brand: { name: string; url: string };
  competitors: { name: string; url: string; identifiers: string[] }[];
  prompts: { text: string; type: 'branded' | 'non_branded' }[];
  locations: typeof CITIES;
}

export function siteSpec(s: DatasetShape): SiteSpec {
  return {
    brand: { name: 'Acme', url: 'https://www.acme.example.com' },
    competitors: BRANDS.slice(0, s.competitors).map((b) => ({
      name: b,
      url: `https://www.${b.toLowerCase()}.example.net`,
      identifiers: [`${b} Inc`],
    })),
    prompts: Array.from({ length: s.prompts }, (_, i) => ({
      text: `${FRAMES[i % FRAMES.length].replace('{}', SUBJECTS[Math.floor(i / FRAMES.length) % SUBJECTS.length])} (${i + 1})`,
      type: i % 10 === 0 ? ('branded' as const) : ('non_branded' as const),
    })),
    locations: CITIES.slice(0, s.locations),
  };
}

export interface SiteIds {
  promptIds: string[];
  locationIds: string[];
}

export interface ImportItem {
  external_id: string;
  prompt_id: string;
  model: string;
  run_at: string;
  text: string;
  citations: string[];
  location_id: string;
  products?: unknown[];
  retrieved?: string[];
  search_queries?: string[];
}

const DAY_MS = 86_400_000;

/** The dataset's answers in import batches of `size`, day by day (so each batch touches one or two days). */
export async function* answerBatches(s: DatasetShape, ids: SiteIds, size = 1000): AsyncGenerator<ImportItem[]> {
  const spec = siteSpec(s);
  const engine = createSimulatedEngine({ seed: s.seed });
  const website: EngineWebsite = {
    brand: { name: spec.brand.name, domain: 'acme.example.com' },
    competitors: spec.competitors.map((c) => ({ name: c.name, domain: new URL(c.url).hostname.replace(/^www\./, ''), identifiers: c.identifiers })),
  };
  const first = Date.parse(`${s.firstDay}T00:00:00Z`);
  let batch: ImportItem[] = [];
  for (let d = 0; d < s.days; d++) {
    const dayStart = first + d * DAY_MS;
    const day = new Date(dayStart).toISOString().slice(0, 10);
    for (let p = 0; p < s.prompts; p++) {
      for (let l = 0; l < s.locations; l++) {
        for (let m = 0; m < MODEL_IDS.length; m++) {
          const model = MODEL_IDS[m];
          const a = await engine.ask({
            model,
            prompt: spec.prompts[p].text,
            day,
            website,
            location: { country: spec.locations[l].country, city: spec.locations[l].city },
          });
          const minute = (p * 37 + l * 11 + m * 5) % 1440;
          batch.push({
            external_id: `${day}/${p}/${l}/${model}`,
            prompt_id: ids.promptIds[p],
            model,
            run_at: new Date(dayStart + minute * 60_000).toISOString(),
            text: a.text,
            citations: a.citations,
            location_id: ids.locationIds[l],
            ...(a.products.length ? { products: a.products } : {}),
            ...(a.retrieved ? { retrieved: a.retrieved } : {}),
            ...(a.search_queries ? { search_queries: a.search_queries } : {}),
          });
          if (batch.length === size) {
            yield batch;
            batch = [];
          }
        }
      }
    }
  }
  if (batch.length) yield batch;
}
