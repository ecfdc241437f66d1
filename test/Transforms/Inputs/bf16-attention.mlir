// A bf16 attention op with a mask, for pipeline tests.
func.func @attention(%q: tensor<2x5x64xbf16>, %k: tensor<2x40x64xbf16>, %v: tensor<2x40x64xbf16>, %m: tensor<2x5x40xi1>) -> tensor<2x5x64xbf16> {
  %init = tensor.empty() : tensor<2x5x64xbf16>
  %r = attn.attention ins(%q, %k, %v : tensor<2x5x64xbf16>, tensor<2x40x64xbf16>, tensor<2x40x64xbf16>) mask(%m : tensor<2x5x40xi1>) outs(%init : tensor<2x5x64xbf16>) scale = 1.25e-01 -> tensor<2x5x64xbf16>
  return %r : tensor<2x5x64xbf16>
}
