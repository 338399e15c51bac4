import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { provisionDemoWebsite } from '../commands/catalog/demo-catalog';
import { createOrganization } from '../commands/organizations/create-organization';
import { SYSTEM_ACTOR } from './domain/events';
import { isDomainError } from './domain/errors';
import type { Runtime } from './runtime';

/**
 * First embedded start: provisions the demo organization and prints how to use it. The demo key is kept in
 * DATA_DIR/demo-key.txt (embedded, local only) so it can be printed again on later starts.
 */
export async function bootstrapEmbedded(rt: Runtime, baseUrl: string): Promise<void> {
  const keyFile = join(rt.config.dataDir, 'demo-key.txt');
  let key: string;
  if (existsSync(keyFile)) {
    key = readFileSync(keyFile, 'utf8').trim();
  } else {
    const existing = await rt.database.db('rm_organizations').count<{ count: string }[]>('* as count');
    if (Number(existing[0].count) > 0) return;
    const r = await createOrganization(rt.store, { name: 'Demo Brand', plan: 'enterprise', features: ['pitch', 'knowledge_base', 'ai_search_value', 'seo_recommendations', 'shopping'], pitch_allowance: 10, owner_email: 'owner@demo.aivis.local' });
    if (isDomainError(r)) throw new Error(r.message);
    const demo = await provisionDemoWebsite({ store: rt.store, organizationId: r.result.organization_id, actor: SYSTEM_ACTOR });
    await rt.waitForReadModels(demo.position ?? r.position);
    key = r.result.api_key;
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  }
  const mcp = { mcpServers: { aivis: { type: 'http', url: `${baseUrl}/api/mcp`, headers: { 'x-api-key': key } } } };
  process.stdout.write(
    [
      '',
      'aivis demo organization is ready.',
      `  demo key (global, partner): ${key}`,
      `  try:  curl -s -H 'x-api-key: ${key}' ${baseUrl}/api/v1/websites`,
      '  MCP client config:',
      JSON.stringify(mcp, null, 2)
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n'),
      '',
    ].join('\n') + '\n',
  );
}
