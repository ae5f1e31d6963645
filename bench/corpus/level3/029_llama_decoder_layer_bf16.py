"""Llama-style decoder layer in bf16: RMSNorm, grouped-query attention with rotary embeddings (causal), RMSNorm, SwiGLU MLP."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 2048
hidden_size = 2048
num_heads = 16
num_kv_heads = 4
intermediate_size = 5632


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, dtype=torch.bfloat16))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def __init__(self, hidden_size, num_heads, num_kv_heads, intermediate_size, max_pos=4096):
        super().__init__()
        self.nh, self.nkv = num_heads, num_kv_heads
        self.hd = hidden_size // num_heads
        bf = dict(bias=False, dtype=torch.bfloat16)
        self.q_proj = nn.Linear(hidden_size, num_heads * self.hd, **bf)
        self.k_proj = nn.Linear(hidden_size, num_kv_heads * self.hd, **bf)
        self.v_proj = nn.Linear(hidden_size, num_kv_heads * self.hd, **bf)
        self.o_proj = nn.Linear(num_heads * self.hd, hidden_size, **bf)
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, **bf)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, **bf)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, **bf)
        self.input_layernorm = RMSNorm(hidden_size)
        self.post_attention_layernorm = RMSNorm(hidden_size)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(max_pos).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos().to(torch.bfloat16), persistent=False)
        self.register_buffer("sin", emb.sin().to(torch.bfloat16), persistent=False)

    def forward(self, hidden_states):
        B, T, _ = hidden_states.shape
        residual = hidden_states
        h = self.input_layernorm(hidden_states)
        q = self.q_proj(h).view(B, T, self.nh, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(B, T, self.nkv, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(B, T, self.nkv, self.hd).transpose(1, 2)
        cos, sin = self.cos[:T], self.sin[:T]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(self.nh // self.nkv, dim=1)
        v = v.repeat_interleave(self.nh // self.nkv, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, -1)
        h = residual + self.o_proj(a)
        m = self.post_attention_layernorm(h)
        return h + self.down_proj(F.silu(self.gate_proj(m)) * self.up_proj(m))


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden_size, num_heads, num_kv_heads, intermediate_size]
