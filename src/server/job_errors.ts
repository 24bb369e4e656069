/** The job layer's errors as the orchestrator reads them: what happened, and what to do. */
import type { JobProblem } from "../jobs/errors.ts";
import { dailyBudgetText } from "../jobs/spend/daily_budget_text.ts";
import { candidateText, MIN_PREFIX } from "../jobs/job_ref.ts";
import { notLocalText } from "../jobs/residency.ts";
import { escapeLine } from "../platform/plain_text.ts";

const LIST_HINT = "delegate_list shows the jobs there are";

export function jobProblemText(p: JobProblem): string {
  switch (p.kind) {
    case "unknown-job":
      return `Unknown job id "${
        p.id.slice(0, 80)
      }". Job ids are UUIDs; delegate_list shows the jobs there are`;
    case "unknown-session":
      return `Unknown session id "${
        p.id.slice(0, 80)
      }". delegate_list shows sessions and their jobs`;
    case "bad-job-ref": {
      const shown = `Unknown job id "${escapeLine(p.ref.slice(0, 80))}". `;
      return p.why === "too-short"
        ? `${shown}A prefix of a job id needs at least ${MIN_PREFIX} characters (8 are ` +
          `usually unique); ${LIST_HINT}`
        : `${shown}Job ids are UUIDs (hex digits and dashes); a unique prefix of one, at ` +
          `least ${MIN_PREFIX} characters, works too. ${LIST_HINT}`;
    }
    case "unmatched-job-prefix": {
      const head = `Unknown job id "${escapeLine(p.prefix.slice(0, 80))}": no job id starts ` +
        "with it";
      if (p.jobs === 0) return `${head}, and there are no jobs yet`;
      return `${head}. The newest of the ${p.jobs} jobs: ` +
        `${p.newest.map(candidateText).join("; ")}. Pass one of these ids, or see ` +
        "delegate_list for all";
    }
    case "ambiguous-job-prefix": {
      const which = p.count > p.matches.length
        ? `the newest ${p.matches.length} of ${p.count}`
        : `all ${p.count}`;
      return `Ambiguous job id "${escapeLine(p.prefix)}": ${p.count} job ids start with it ` +
        `(${which}: ${p.matches.map(candidateText).join("; ")}). Pass more of the id, or ` +
        "the whole id";
    }
    case "cancel-pending":
      return `Asked the server process that runs job ${p.id} (pid ${p.ownerPid ?? "?"}) to ` +
        `cancel it, but it is still ${p.state} after ${Math.round(p.waitedMs / 1000)}s. ` +
        `The request stays in place and that process acts on it when it can; check with ` +
        `delegate_status({ job_id: "${p.id}" })`;
    case "needs-native":
      return `Cannot start job: ${p.what} needs engine "native"` +
        (p.what === "files"
          ? ": only the native engine reads files into the prompt"
          : `; this engine always uses the Ollama at ${p.baseUrl}`);
    case "backend-api":
      return `Cannot start job: the ${p.engine} engine needs a backend that serves ` +
        `Anthropic's Messages API (kind ${p.kinds.join(" or ")}), and backend "${p.backend}" ` +
        `is of kind ${p.backendKind}. Give it engine "native", or name a backend of kind ` +
        `${p.kinds.join(" or ")}`;
    case "unknown-backend":
      return `Cannot start job: there is no backend "${p.name}". Configured: ${
        p.configured.join(", ")
      }. Backends are the user's settings (ollama-delegate config --backend name=url)`;
    case "no-model-for-backend":
      return `Cannot start job: name a model for backend "${p.backend}" (there is no default ` +
        `model)`;
    case "model-not-allowed":
      return `Cannot start job: model "${p.model}" is not in the allowed list ` +
        `(${p.allowed.join(", ")}). Only the user can change the list, from a terminal`;
    case "daily-budget":
      return `Cannot start job: ${dailyBudgetText(p)}. Wait until then, use another backend, ` +
        "or do the work yourself; only the user can raise the budget, from a terminal";
    case "not-local": {
      const instead = p.role === "session"
        ? "Start a new task on a local model"
        : p.place === "cloud"
        ? "Name a local model instead (ollama_models marks each [local] or [cloud])"
        : "Use a backend on this machine or a private network instead";
      const user = p.role === "default"
        ? "ollama-delegate config --default-model <a local model>, or --residency any"
        : "ollama-delegate config --residency any";
      return `Cannot start job: ${escapeLine(notLocalText(p))}. ${instead}; only the user can ` +
        `change this, from a terminal (${user})`;
    }
  }
}
