(globalThis as any).__TG_DUMP = 1;
const { compile } = await import("../_schema.ts");
const { TOOLS } = await import("./validate_bench.ts");
compile((TOOLS as any)[Deno.args[0]].schema);
