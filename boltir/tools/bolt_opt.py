"""bolt-opt: parse IR, run a pass pipeline, print the result (xDSL's opt driver, with
boltir's dialects and passes, pass plugins, and one-line errors)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.universe import Universe
from xdsl.utils.exceptions import ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from boltir.diagnostics import BoltError
from boltir.ir import (
    LocatingParser,
    boltir_dialect_factories,
    parse_error_to_bolt,
    print_module,
    weight_resources,
)
from boltir.passes import statistics
from boltir.pipelines import available_passes, parse_pipeline_spec, run_passes
from boltir.tools.common import run_tool
from boltir.version import __version__
from boltir.weights import intern_parsed_weights


def plugin_paths(argv: Sequence[str]) -> list[str]:
    """`--pass-plugin` values, read before the full parser exists: plugins add passes
    that the pipeline option refers to."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--pass-plugin", action="append", default=[])
    known, _ = pre.parse_known_args(list(argv))
    return known.pass_plugin


class BoltOptMain(xDSLOptMain):
    version_format = f"bolt-opt (boltir {__version__}) built on xdsl {{xdsl_version}}"

    def __init__(self, args: Sequence[str] | None = None):
        argv = list(sys.argv[1:] if args is None else args)
        self.plugin_files = plugin_paths(argv)
        super().__init__(description="boltir's modular optimizer: parse, run passes, print", args=argv)

    # -------------------------------------------------------------- registration

    def register_all_dialects(self) -> None:
        ours = boltir_dialect_factories()
        for name, factory in ours.items():
            self.ctx.register_dialect(name, factory)
        for name, factory in Universe.get_multiverse().all_dialects.items():
            if name not in ours:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        self.available_passes.update(available_passes(self.plugin_files))

    def register_all_targets(self) -> None:
        super().register_all_targets()

        def cuda_target():
            from boltir.backends.cuda.codegen.cutlass_kernels import CudaTarget  # noqa: PLC0415 -- loaded on use

            return CudaTarget

        self.available_targets["cuda"] = cuda_target

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--pass-plugin",
            action="append",
            default=[],
            metavar="FILE.py",
            help="load every ModulePass subclass defined in FILE.py as a pass (repeatable)",
        )
        arg_parser.add_argument(
            "--elide-weights",
            action="store_true",
            help="leave weight blobs out of the printout (readable, but not runnable)",
        )
        arg_parser.add_argument(
            "--pass-stats", action="store_true", help="report what each pass changed (on stderr, after the run)"
        )
        arg_parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")

    # ------------------------------------------------------------------ pipeline

    def setup_pipeline(self) -> None:
        self.pipeline = PassPipeline(tuple(parse_pipeline_spec(self.args.passes, self.available_passes)))

    def apply_passes(self, prog: ModuleOp) -> None:
        def between_passes(pass_: ModulePass, module: ModuleOp) -> None:
            if self.args.print_between_passes and pass_ is not self.pipeline.passes[-1]:
                print(f"IR after {pass_.name}:")
                print(print_module(module, self.ctx, elide_weights=self.args.elide_weights))

        run_passes(prog, self.pipeline.passes, self.ctx, verify=not self.args.disable_verify, after_pass=between_passes)

    # -------------------------------------------------------------- input/output

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        try:
            stream, extension = super().get_input_stream()
        except OSError as error:
            raise BoltError(f"cannot read '{self.args.input_file}': {error.strerror}") from error
        return stream, extension or "mlir"

    def prepare_input(self):
        try:
            return super().prepare_input()
        except ValueError as error:
            raise BoltError(f"{error}; pass -f mlir to read it as IR") from error

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        if (self.args.frontend or file_extension) != "mlir":
            return super().parse_chunk(chunk, file_extension, start_offset)
        try:
            text = chunk.read().decode("utf-8")
        except UnicodeDecodeError as error:
            raise BoltError(f"input is not UTF-8 text (byte {error.start})", self.get_input_name()) from error
        try:
            module = LocatingParser(self.ctx, text, self.get_input_name(), start_offset).parse_module(
                not self.args.no_implicit_module
            )
        except ParseError as error:
            raise parse_error_to_bolt(error, start_offset) from error
        intern_parsed_weights(module, weight_resources(self.ctx))
        return module

    def output_resulting_program(self, prog: ModuleOp) -> str:
        if self.args.target != "mlir":
            return super().output_resulting_program(prog)
        return print_module(
            prog,
            self.ctx,
            generic=self.args.print_op_generic,
            elide_weights=self.args.elide_weights,
            debuginfo=self.args.print_debuginfo,
            properties_as_attributes=self.args.print_no_properties,
        )

    # ------------------------------------------------------------------------ run

    def run(self) -> None:
        """xDSL's loop, with errors reported as diagnostics where the user asked for them."""
        with statistics.collecting() as collected:
            self._run_chunks()
        if self.args.pass_stats:
            sys.stderr.write(statistics.format_statistics(collected, [p.name for p in self.pipeline.passes]))

    def _run_chunks(self) -> None:
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        try:
            for index, (chunk, offset) in enumerate(chunks):
                try:
                    if index > 0:
                        output.write("// -----\n")
                    module = self.parse_chunk(chunk, file_extension, offset)
                    if module is not None:
                        self.apply_passes(module)
                        output.write(self.output_resulting_program(module))
                    output.flush()
                except BoltError as error:
                    is_parse = error.__cause__ is not None and isinstance(error.__cause__, ParseError)
                    if (is_parse and self.args.parsing_diagnostics) or (
                        not is_parse and self.args.verify_diagnostics
                    ):
                        print(error)
                    else:
                        raise
                finally:
                    chunk.close()
        finally:
            if output is not sys.stdout:
                output.close()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_tool("bolt-opt", lambda: BoltOptMain(argv).run(), debug="--debug" in argv)


if __name__ == "__main__":
    sys.exit(main())
