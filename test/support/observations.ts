/**
 * The body of POST /api/v1/attributes/observations as the spec lists it, sorted: the REST route's documented body and the
 * MCP tool get_attribute_observations' input both take exactly these.
 */
export const OBSERVATIONS_REQUEST_FIELDS = ['attribute_ids', 'entity_ids', 'filters', 'page_num', 'page_size', 'positive', 'sort', 'website_id'];
