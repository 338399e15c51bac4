import { type DomainError, isDomainError } from '../../src/domain/errors';
import { MODEL_IDS } from '../../src/domain/models';
import { utcDay } from '../../src/domain/dates';
import type { Position } from '../../src/eventstore/port';
import type { CommandContext, Handled } from '../handle';
import { provisionWebsite } from '../websites/provision-website';
import { createAttribute } from './create-attribute';
import { createLocation } from './create-location';
import { createPersona } from './create-persona';
import { createSavedView } from './create-saved-view';
import { createSchedule } from './create-schedule';

/**
 * The embedded demo's website: competitors, topics with prompts, a location, a persona, attributes, a custom
 * schedule and a saved view, written through the same commands the API uses. Returns the website id and the
 * position of the last write.
 */
export async function provisionDemoWebsite(ctx: CommandContext, today = new Date()): Promise<{ website_id: string; position: Position | null }> {
  const site = await provisionWebsite(ctx, {
    name: 'Demo Brand',
    url: 'https://demo-brand.example.com',
    competitors: [
      { name: 'Northwind', url: 'https://northwind.example.net', identifiers: ['Northwind Traders'] },
      { name: 'Contoso', url: 'https://contoso.example.org', identifiers: ['Contoso Ltd'] },
      { name: 'Fabrikam', url: 'https://fabrikam.example.io' },
    ],
    topics: [
      {
        name: 'Pricing',
        prompts: [
          { text: 'What is the most affordable project management tool for small teams?' },
          { text: 'Is Demo Brand worth the price?', type: 'branded' },
        ],
      },
      {
        name: 'Integrations',
        prompts: [
          { text: 'Which project management tools integrate best with Slack and GitHub?' },
          { text: 'Best tools to sync tasks with a calendar' },
        ],
      },
      { name: 'Support', prompts: [{ text: 'Which project management software has the best customer support?' }] },
    ],
  });
  if (isDomainError(site)) throw new Error(site.message);
  const websiteId = site.result.website.id;
  const c = { ...ctx, websiteId };
  let position = site.position;
  const step = <R>(r: Handled<R> | DomainError) => {
    if (isDomainError(r)) throw new Error(r.message);
    position = r.position ?? position;
    return r.result;
  };
  step(
    await createLocation(c, {
      website_id: websiteId,
      location: 'New York, New York, United States',
      country: 'United States',
      region: 'New York',
      city: 'New York',
    }),
  );
  step(
    await createPersona(c, {
      website_id: websiteId,
      name: 'Operations lead',
      description: 'Runs a 20-person team and compares tools on price and support',
    }),
  );
  step(await createAttribute(c, { website_id: websiteId, name: 'Price', description: 'How affordable the product is said to be' }));
  step(await createAttribute(c, { website_id: websiteId, name: 'Support', description: 'How helpful its support is said to be' }));
  step(
    await createSchedule(c, {
      website_id: websiteId,
      name: 'Weekly launch check',
      models: MODEL_IDS.slice(0, 3),
      starts_on: utcDay(today),
      frequency: 'weekly',
    }),
  );
  step(
    await createSavedView(c, {
      website_id: websiteId,
      name: `Active prompts, without ${MODEL_IDS[MODEL_IDS.length - 1]}`,
      filters: { prompt_status: 'active', models_not: [MODEL_IDS[MODEL_IDS.length - 1]] },
    }),
  );
  return { website_id: websiteId, position };
}
