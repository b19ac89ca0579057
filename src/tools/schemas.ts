/** Schemas shared by several tools and by the transports. */
import Type from 'typebox';
import { ERROR_STATUS, type ErrorCode } from '../errors.ts';

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, for people' }),
    // Unsafe<ErrorCode> only types the union built from the table (the JSON Schema is the union's).
    code: Type.Unsafe<ErrorCode>(
      Type.Union(
        (Object.keys(ERROR_STATUS) as ErrorCode[]).map((c) => Type.Literal(c)),
        { description: 'Stable error code' },
      ),
    ),
    request_id: Type.String({ description: 'The x-request-id of the call' }),
  },
  { additionalProperties: false, description: 'Error: a message, a stable code and the request id' },
);
