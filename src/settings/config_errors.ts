/** A `config` failure: printed as one line, exit code 2. */
export class ConfigUsageError extends Error {
  override name = "ConfigUsageError";
}
