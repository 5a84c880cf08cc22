import fastJson from 'fast-json-stringify';
import { z } from 'zod';

/**
 * A route's response serializer compiled once from its zod schema's JSON Schema (fast-json-stringify, what Fastify
 * uses for JSON Schema routes): writes only the schema's fields, in one pass. The zod serializer encodes (copies and
 * checks) the whole answer first and then runs JSON.stringify over the copy — twice the work and twice the garbage
 * on a read answered a thousand times a second. For hot reads whose answers the server builds from typed rows
 * (the types are checked where they are built); a field the schema does not name is never written.
 */
export function fastSerializer({ schema }: { schema: unknown }): (data: unknown) => string {
  const jsonSchema = z.toJSONSchema(schema as z.ZodType, { target: 'draft-7', io: 'output' });
  return fastJson(jsonSchema as Parameters<typeof fastJson>[0]) as (data: unknown) => string;
}
