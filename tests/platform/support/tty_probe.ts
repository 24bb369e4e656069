/** Prints which standard streams platform/runtime.ts sees as terminals, as JSON on stderr. */
import process from "node:process";
import { isTty } from "../../../src/platform/runtime.ts";

process.stderr.write(
  `${
    JSON.stringify({ stdin: isTty("stdin"), stdout: isTty("stdout"), stderr: isTty("stderr") })
  }\n`,
);
