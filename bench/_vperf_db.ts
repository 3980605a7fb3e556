import { createValidator } from "../validate.ts";
import { TOOLS } from "./validate_bench.ts";
for (const [name, t] of Object.entries(TOOLS)) {
  const v = createValidator([{ name, parameters: t.schema }], { scan: false });
  console.log(name, (v as any).tools.length);
}
