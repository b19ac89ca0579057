/**
 * The `confirm` input of destructive tools. Over MCP a destructive call is confirmed by the user
 * through elicitation when the client supports it; otherwise it runs only with confirm: true
 * (src/mcp/confirm-destructive.ts). REST ignores it: an HTTP DELETE is explicit already.
 */
import Type from 'typebox';

export const CONFIRM_HINT =
  'Over MCP this call destroys data: a client that supports elicitation asks the user to confirm it; any other client must pass "confirm": true (without it the call fails with CONFIRMATION_REQUIRED). REST ignores confirm.';

export const ConfirmField = Type.Optional(
  Type.Boolean({ description: 'MCP clients without elicitation: true to confirm the destructive call (REST ignores it)' }),
);
