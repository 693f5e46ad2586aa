"""The call-site axis: a style's op called the way user code calls it (docs/call-sites.md).

How an op is called can change what compile and export make of it: an `autograd.Function.apply` held as an
`nn.Module` attribute fails fullgraph and strict export on torch 2.11 where a direct call passes. Each site is
real Python source, executed in a module object of its own, so Dynamo meets the globals, module attributes and
method calls that a user's file has, not a harness closure. A site's callable replaces the op's `call`;
pipelines run it unchanged (export takes a site that is an `nn.Module` as the module it exports).
"""

from __future__ import annotations

import dataclasses
import sys
import types
from typing import Any

import torch

from harness.domain.spec import KernelSpec, identity_wrap, visible_output
from harness.vocab import CALL_SITES

SOURCES: dict[str, str] = {
    # autograd_function: `Function` is the style's autograd.Function subclass, a global of the site's module.
    "direct": """
def call({params}):
    return Function.apply({params})
""",
    "module_alias": """
function_apply = Function.apply


def call({params}):
    return function_apply({params})
""",
    "module_attribute": """
class Caller(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.f = Function.apply

    def forward(self, {params}):
        return self.f({params})


call = Caller()
""",
    # raw: `kernel_op` is the raw style's free function; `launch` the spec's launch, `wrap` the identity wrap.
    "free_function": """
def call({params}):
    return kernel_op({params})
""",
    "module_forward": """
class Caller(torch.nn.Module):
    def forward(self, {params}):
        return visible_output(spec, spec.launch(wrap, {params}))


call = Caller()
""",
}


def site_source(spec: KernelSpec, site: str) -> str:
    """The user code of one call site, for this spec's argument names (also shown in docs/call-sites.md)."""
    return SOURCES[site].format(params=", ".join(spec.argument_names))


def call_at_site(spec: KernelSpec, style: str, site: str, op_call: Any) -> Any:
    """The callable (a function or an nn.Module instance) that calls `op_call` from `site`."""
    if site not in CALL_SITES.get(style, ()):
        sites = ", ".join(CALL_SITES.get(style, ())) or "none"
        raise ValueError(f"style {style!r} has no call site {site!r}; its sites: {sites}")
    module = types.ModuleType(f"tcm_call_site_{spec.name}_{site}")
    module.__dict__.update(torch=torch, spec=spec, wrap=identity_wrap, visible_output=visible_output, kernel_op=op_call,
                           Function=getattr(op_call, "__self__", None))
    if style == "autograd_function" and not (isinstance(module.Function, type)
                                             and issubclass(module.Function, torch.autograd.Function)):
        raise TypeError(f"the autograd_function style's call is not an autograd.Function's apply: {op_call!r}")
    # Importable as a user's file is: strict export looks a function's module up by name (measured: without this
    # entry every plain-function site failed strict export with ModuleNotFoundError, a harness artefact).
    sys.modules[module.__name__] = module
    exec(compile(site_source(spec, site), f"<call site {site} of {spec.name}>", "exec"), module.__dict__)  # noqa: S102
    return module.call


def at_call_site(spec: KernelSpec, built: Any, style: str, site: str) -> Any:
    """The built op, called from `site`; what it is made of (kernel names, operator) is unchanged."""
    call = call_at_site(spec, style, site, built.call)
    return dataclasses.replace(built, call=call, notes=[*built.notes, f"called from the {site} call site"])
