// Imported by the shim before a call arrives, so that Deno opens its module caches
// ahead: no code of the tool runs before its call.
export const ready = true;
