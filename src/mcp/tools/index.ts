/**
 * Every MCP tool, one list per area. To add an area: write src/mcp/tools/<area>.ts exporting an array of
 * `tool({name, description, input, public?, handler})` (see ../tool.ts; the handler calls the same queries/ and
 * commands/ functions as the area's REST routes, reusing their zod schemas), then spread it into `allTools` below.
 * Throw DomainErrorException / HttpError (requireWebsite, requireGlobal, orFail, ...) as routes do: the caller
 * gets a tool error with REST's message. Tools are private unless `public: true`. Every tool has a `title` and
 * `annotations` (ToolHints), every input field a `.describe()` in the spec's words; test/mcp/tool-list.test.ts
 * checks both and pins the list (`npx vitest run -u test/mcp/tool-list.test.ts` after an intended change).
 */
import type { ToolDef } from '../tool';
import { activityTools } from './activity';
import { aiAccessTools } from './ai-access';
import { catalogTools } from './catalog';
import { metricsTools } from './metrics';
import { observationsTools } from './observations';
import { responseTools } from './responses';
import { shoppingTools } from './shopping';
import { websiteTools } from './websites';

export const allTools: ToolDef[] = [...websiteTools, ...activityTools, ...aiAccessTools, ...catalogTools, ...responseTools, ...metricsTools, ...observationsTools, ...shoppingTools];
