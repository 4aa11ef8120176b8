"""bolt-opt: parse IR, run a pass pipeline, print the result (xDSL's opt driver, with
boltir's dialects and passes, pass plugins, and one-line errors)."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from boltir import __version__
from boltir.diagnostics import BoltError
from boltir.ir import LocatingParser, boltir_dialect_factories, parse_error_to_bolt, print_module, verify_module, weight_resources
from boltir.passes import registered_passes, statistics
from boltir.plugins import entry_point_passes, load_pass_plugin, register_passes
from boltir.tools.common import run_tool
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
        super().register_all_passes()
        self.available_passes.update(registered_passes())
        register_passes(self.available_passes, entry_point_passes(), f"entry-point group 'boltir.passes'")
        for path in self.plugin_files:
            register_passes(self.available_passes, load_pass_plugin(path), f"pass plugin '{path}'")

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
        try:
            specs = tuple(parse_pipeline(self.args.passes))
        except ArgSpecParseError as error:
            raise BoltError(f"bad pass pipeline: {str(error).splitlines()[-1].strip() or error}") from error
        passes: list[ModulePass] = []
        for spec in specs:
            if spec.name not in self.available_passes:
                close = difflib.get_close_matches(spec.name, list(self.available_passes), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else "; `bolt-opt --help` lists them"
                raise BoltError(f"unknown pass '{spec.name}'{hint}")
            try:
                passes.append(self.available_passes[spec.name]().from_pass_spec(spec))
            except (ValueError, TypeError) as error:
                raise BoltError(f"bad argument for pass '{spec.name}': {error}") from error

        def between_passes(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
            if not self.args.disable_verify:
                try:
                    verify_module(module)
                except BoltError as error:
                    if previous is not None:
                        error.message = f"after pass '{previous.name}': {error.message}"
                    raise
            if previous and following and self.args.print_between_passes:
                print(f"IR after {previous.name}:")
                print(print_module(module, self.ctx, elide_weights=self.args.elide_weights))

        self.pipeline = PassPipeline(tuple(passes), between_passes)

    def apply_passes(self, prog: ModuleOp) -> None:
        if not self.pipeline.passes:
            self.pipeline.callback(None, prog, None)
            return
        for index, pass_ in enumerate(self.pipeline.passes):
            previous = self.pipeline.passes[index - 1] if index else None
            self.pipeline.callback(previous, prog, pass_)
            try:
                pass_.apply(self.ctx, prog)
            except BoltError:
                raise
            except (VerifyException, DiagnosticException) as error:
                raise BoltError(f"pass '{pass_.name}' failed: {error.args[0] if error.args else error}") from error
            except Exception as error:
                raise BoltError(
                    f"pass '{pass_.name}' crashed: {type(error).__name__}: {error} (--debug shows the traceback)"
                ) from error
        self.pipeline.callback(self.pipeline.passes[-1], prog, None)

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
