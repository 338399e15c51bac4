/**
 * Every MCP tool, one list per area. To add an area: write src/mcp/tools/<area>.ts exporting an array of
 * `tool({name, title, annotations, description, input, output, public?, handler})` (see ../tool.ts). A tool is an
 * adapter: its handler calls the area's operation in src/app/<area>.ts (the one the REST route calls), with the same
 * input schema; `output` is the read model's view schema from queries/<area>/. Access checks, waits and errors are
 * the operation's: a thrown DomainErrorException / HttpError reaches the caller as a tool error with REST's message.
 * Tools are private unless `public: true`. Every tool has a `title` and `annotations` (ToolHints), every input field
 * a `.describe()` in the spec's words; test/mcp/tool-list.test.ts checks both and pins the list
 * (`npx vitest run test/mcp/tool-list.test.ts --update` after an intended change). Then spread the list into `allTools`.
 */
import type { ToolDef } from '../tool';
import { activityTools } from './activity';
import { aiAccessTools } from './ai-access';
import { catalogTools } from './catalog';
import { metricsTools } from './metrics';
import { observationsTools } from './observations';
import { responseTools } from './responses';
import { shoppingTools } from './shopping';
import { teamTools } from './team';
import { knowledgeTools } from './knowledge';
import { pitchesTools } from './pitches';
import { websiteTools } from './websites';
import { aiValueTools } from './ai-value';
import { creditsTools } from './credits';
import { discoveryTools } from './discovery';
import { contentTools } from './content';

export const allTools: ToolDef[] = [
  ...websiteTools,
  ...activityTools,
  ...aiAccessTools,
  ...catalogTools,
  ...responseTools,
  ...metricsTools,
  ...observationsTools,
  ...shoppingTools,
  ...teamTools,
  ...aiValueTools,
  ...knowledgeTools,
  ...creditsTools,
  ...discoveryTools,
  ...pitchesTools,
  ...contentTools,
];
